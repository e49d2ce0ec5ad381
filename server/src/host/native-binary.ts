/**
 * Where the native process host's executable is. `npm install` (prepare)
 * and `npm run build` compile it from server/native/src with the system's C
 * compiler (scripts/build-native.mjs), as node-gyp builds a native module;
 * a package built for publishing carries it prebuilt.
 */
import { accessSync, constants } from "node:fs";
import { fileURLToPath } from "node:url";

const BINARY = fileURLToPath(new URL("../../native/bin/execmux-host", import.meta.url));

export function hostBinary(): string {
  try {
    accessSync(BINARY, constants.X_OK);
  } catch {
    throw new Error(`the process host ${BINARY} is missing: build it with \`npm run build\` (it needs a C compiler: gcc or cc)`);
  }
  return BINARY;
}
