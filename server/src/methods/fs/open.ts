/**
 * fs/open: opens a regular file under the client's handle id, for
 * fs/readBlock (mode `read`, the default) or fs/writeBlock (mode `replace`:
 * created, or truncated in place). Under a profile that does not read (or
 * write) the whole disk, it is opened inside the sandbox (confined-open.ts,
 * capability sandboxedFileStreaming).
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { checkHandleId, fileHandlesOf } from "./file-handles.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { openRegularFile, openRegularFileForReplace } from "./regular-file.js";
import { fsConfinement, hiddenFilesFor } from "./sandbox-gate.js";

export async function fsOpen(params: ParamsOf<"fs/open">, context: SessionContext): Promise<ResultOf<"fs/open">> {
  checkHandleId(params.handleId);
  const path = fsPath(params.path);
  const replace = params.mode === "replace";
  const confinement = await fsConfinement(params.sandbox, replace ? "write" : "read", context);
  const openFile = async () => {
    if (confinement) {
      const { openConfined } = await import("./confined-open.js");
      return openConfined(confinement, path, replace, context.signal);
    }
    // In the daemon under a sandbox profile, a read must not reach the daemon's own files (a confined one cannot
    // see them); a write there is under a profile that writes the whole disk, as fs/writeFile's direct writes are.
    const hidden = replace ? undefined : await hiddenFilesFor(params.sandbox, context);
    return mappingFsErrors(async () => {
      const file = await (replace ? openRegularFileForReplace(path) : openRegularFile(path));
      await hidden?.checkOpened(file, path).catch(async (error: unknown) => {
        await file.close();
        throw error;
      });
      return file;
    });
  };
  await fileHandlesOf(context).open(params.handleId, openFile);
  return { handleId: params.handleId };
}
