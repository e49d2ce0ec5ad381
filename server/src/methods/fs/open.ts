/**
 * fs/open: opens a regular file under the client's handle id, for
 * fs/readBlock (mode `read`, the default) or fs/writeBlock (mode `replace`:
 * created, or truncated in place).
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { checkHandleId, fileHandlesOf } from "./file-handles.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { openRegularFile, openRegularFileForReplace } from "./regular-file.js";
import { checkDirectRead, checkDirectWrite, hiddenFilesFor } from "./sandbox-gate.js";

export async function fsOpen(params: ParamsOf<"fs/open">, context: SessionContext): Promise<ResultOf<"fs/open">> {
  checkHandleId(params.handleId);
  const path = fsPath(params.path);
  const replace = params.mode === "replace";
  if (replace) checkDirectWrite(params.sandbox);
  else checkDirectRead(params.sandbox);
  // A read in the daemon under a sandbox profile must not reach the daemon's own files; a write
  // there is under a profile that writes the whole disk, as fs/writeFile's direct writes are.
  const hidden = replace ? undefined : await hiddenFilesFor(params.sandbox, context);
  const openFile = replace ? openRegularFileForReplace : openRegularFile;
  await fileHandlesOf(context).open(params.handleId, () =>
    mappingFsErrors(async () => {
      const file = await openFile(path);
      await hidden?.checkOpened(file, path).catch(async (error: unknown) => {
        await file.close();
        throw error;
      });
      return file;
    }),
  );
  return { handleId: params.handleId };
}
