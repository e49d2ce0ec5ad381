/** fs/open: opens a regular file for fs/readBlock under the client's handle id. */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { checkHandleId, fileHandlesOf } from "./file-handles.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { openRegularFile } from "./regular-file.js";
import { checkDirectRead } from "./sandbox-gate.js";

export async function fsOpen(params: ParamsOf<"fs/open">, context: SessionContext): Promise<ResultOf<"fs/open">> {
  checkHandleId(params.handleId);
  const path = fsPath(params.path);
  checkDirectRead(params.sandbox);
  await fileHandlesOf(context).open(params.handleId, () => mappingFsErrors(() => openRegularFile(path)));
  return { handleId: params.handleId };
}
