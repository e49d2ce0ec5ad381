/** fs/open: opens a regular file for fs/readBlock under the client's handle id. */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { checkHandleId, fileHandlesOf } from "./file-handles.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { openRegularFile } from "./regular-file.js";
import { checkDirectRead, hiddenFilesFor } from "./sandbox-gate.js";

export async function fsOpen(params: ParamsOf<"fs/open">, context: SessionContext): Promise<ResultOf<"fs/open">> {
  checkHandleId(params.handleId);
  const path = fsPath(params.path);
  checkDirectRead(params.sandbox);
  const hidden = await hiddenFilesFor(params.sandbox, context);
  await fileHandlesOf(context).open(params.handleId, () =>
    mappingFsErrors(async () => {
      const file = await openRegularFile(path);
      await hidden?.checkOpened(file, path).catch(async (error: unknown) => {
        await file.close();
        throw error;
      });
      return file;
    }),
  );
  return { handleId: params.handleId };
}
