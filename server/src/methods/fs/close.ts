/** fs/close: closes a handle; closing one that is not open succeeds. */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { checkHandleId, fileHandlesOf } from "./file-handles.js";

export async function fsClose(params: ParamsOf<"fs/close">, context: SessionContext): Promise<ResultOf<"fs/close">> {
  checkHandleId(params.handleId);
  await fileHandlesOf(context).close(params.handleId);
  return {};
}
