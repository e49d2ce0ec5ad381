/** fs/getMetadata: what the path is (`isSymlink` for the path itself, the rest for its target; read-operations.ts). */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { fsPath } from "./fs-path.js";
import { runReadOperation } from "./run-operation.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsConfinement, hiddenFilesFor } from "./sandbox-gate.js";

export async function fsGetMetadata(params: ParamsOf<"fs/getMetadata">, context: SessionContext): Promise<ResultOf<"fs/getMetadata">> {
  const path = fsPath(params.path);
  const confinement = await fsConfinement(params.sandbox, "read", context);
  if (!confinement) await mappingFsErrors(async () => (await hiddenFilesFor(params.sandbox, context))?.checkPath(path, params.followSymlinks !== false));
  return runReadOperation(confinement, "metadataOf", [path, params.followSymlinks !== false], context.signal);
}
