/**
 * Where the native process host's executable is. `npm install` (prepare)
 * and `npm run build` compile it from server/native/src with the system's C
 * compiler (scripts/build-native.mjs), as node-gyp builds a native module;
 * a package built for publishing carries it prebuilt.
 */
import { accessSync, constants } from "node:fs";
import { inPackage } from "../package-root.js";

const BINARY = inPackage("native", "bin", "execmux-host");

export function hostBinary(): string {
  try {
    accessSync(BINARY, constants.X_OK);
  } catch {
    throw new Error(`the process host ${BINARY} is missing: build it with \`npm run build\` (it needs a C compiler: gcc or cc)`);
  }
  return BINARY;
}
