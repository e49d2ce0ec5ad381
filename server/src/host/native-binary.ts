/**
 * Where the native process host's executable is. A clone builds it from
 * native/src with the system's C compiler (`npm install`, `npm run build`:
 * scripts/build-native.mjs) into native/bin; the published package carries
 * it prebuilt and static in native/prebuilt/PLATFORM-ARCH, built when the
 * package is packed, so installing it runs no script and needs no compiler.
 * A build from source wins over the prebuilt one (that is how a platform
 * without a prebuilt host gets one).
 *
 * Asked only when a daemon starts: the client commands and the SDK need no
 * native part, so they keep working on a platform without a host.
 */
import { accessSync, constants, readdirSync } from "node:fs";
import { dirname } from "node:path";
import { inPackage } from "../package-root.js";

const SOURCE_BUILD = inPackage("native", "bin", "execmux-host");
const PREBUILT = inPackage("native", "prebuilt");

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The platforms the package carries a prebuilt host for ("linux-x64", ...). */
function prebuiltPlatforms(): string[] {
  try {
    return readdirSync(PREBUILT).filter((platform) => executable(`${PREBUILT}/${platform}/execmux-host`));
  } catch {
    return [];
  }
}

/** The host's path for this machine, or an error of one line that names the platform and what to do. */
export function hostBinary(): string {
  const { platform, arch } = process;
  const prebuilt = `${PREBUILT}/${platform}-${arch}/execmux-host`;
  for (const path of [SOURCE_BUILD, prebuilt]) if (executable(path)) return path;
  if (platform !== "linux") {
    throw new Error(`the daemon (execmux serve) runs on Linux only, not on ${platform}-${arch}: its process host is Linux code; the client commands (exec, ps, attach, mcp) and @execmux/client work here against a daemon on Linux`);
  }
  const shipped = prebuiltPlatforms();
  const carried = shipped.length > 0 ? `carries a prebuilt one for ${shipped.join(", ")} only` : "carries no prebuilt one";
  throw new Error(
    `no process host for ${platform}-${arch} (this @execmux/server ${carried}): ` +
      `build it from source with a C compiler, mkdir -p ${dirname(SOURCE_BUILD)} && cc -std=gnu11 -O2 -o ${SOURCE_BUILD} ${inPackage("native", "src")}/*.c (in a clone: npm run build)`,
  );
}
