/** fs/writeFile: create or truncate a file and write the decoded bytes (write-operations.ts). */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidRequest } from "../../errors/rpc-error.js";
import type { SessionContext } from "../context.js";
import { decodeStandardBase64 } from "./base64.js";
import { fsPath } from "./fs-path.js";
import { runWriteOperation } from "./run-operation.js";
import { fsConfinement } from "./sandbox-gate.js";

export async function fsWriteFile(params: ParamsOf<"fs/writeFile">, context: SessionContext): Promise<ResultOf<"fs/writeFile">> {
  const path = fsPath(params.path);
  const decoded = decodeStandardBase64(params.dataBase64);
  if ("error" in decoded) throw invalidRequest(`fs/writeFile requires valid base64 dataBase64: ${decoded.error}`);
  const confinement = await fsConfinement(params.sandbox, "write", context);
  const options = { followSymlinks: params.followSymlinks !== false, refuseHardLinked: confinement !== undefined };
  await runWriteOperation(confinement, "writeFileBytes", [path, decoded.bytes, options], context.signal);
  return {};
}
