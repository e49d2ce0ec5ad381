/**
 * fs/open under a profile that does not read (or, for mode `replace`,
 * write) the whole disk (capability sandboxedFileStreaming): a confined
 * helper opens the file inside the sandbox (held-open.ts), and while it
 * holds it open the daemon opens the same open file through
 * /proc/<helper>/fd/<n>. What the daemon gets is the file the sandbox let
 * the helper open, reached through the sandbox's own mount (a read-only
 * mount stays read-only), never a path resolved again outside it; the
 * helper then exits. The handle reads (or writes) the file as it is, like a
 * direct one, for as long as it stays open.
 *
 * Like upstream's: a denied path is EACCES, a missing one ENOENT, a write
 * outside the writable roots EROFS, each in upstream's codes and words.
 */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { internalError } from "../../errors/rpc-error.js";
import { inPackage } from "../../package-root.js";
import { runConfinedHolding } from "../../sandbox/confined-call.js";
import type { PreparedFsSandbox } from "../../sandbox/index.js";
import { mappingFsErrors } from "./fs-error.js";
import type { HeldFile } from "./held-open.js";

// The confined helper imports it from dist/ (tsc's output), where it is whether or not the daemon runs from its bundle
// (from the bundle, import.meta.url names a chunk, and ./held-open.js beside it does not exist).
const HELD_OPEN = pathToFileURL(inPackage("dist", "methods", "fs", "held-open.js")).href;

export function openConfined(confinement: PreparedFsSandbox, path: string, replace: boolean, signal: AbortSignal): Promise<FileHandle> {
  return mappingFsErrors(() =>
    runConfinedHolding(confinement, { module: HELD_OPEN, exportName: "openHeld", args: [path, replace] }, signal, async (value, helperPid) => {
      const held = value as HeldFile;
      // No O_CREAT or O_TRUNC: the helper did both already, inside the sandbox.
      const flags = (replace ? constants.O_WRONLY : constants.O_RDONLY) | constants.O_NONBLOCK;
      const file = await open(`/proc/${helperPid}/fd/${held.fd}`, flags);
      const stats = await file.stat({ bigint: true });
      if (stats.dev.toString() !== held.dev || stats.ino.toString() !== held.ino) {
        await file.close();
        throw internalError("the sandboxed helper's file changed under it; try again");
      }
      return file;
    }),
  );
}
