/** fs/createDirectory: `recursive` (the default) makes missing parents and accepts an existing directory. */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { fsPath } from "./fs-path.js";
import { runWriteOperation } from "./run-operation.js";
import { fsConfinement } from "./sandbox-gate.js";

export async function fsCreateDirectory(params: ParamsOf<"fs/createDirectory">, context: SessionContext): Promise<ResultOf<"fs/createDirectory">> {
  const path = fsPath(params.path);
  const confinement = await fsConfinement(params.sandbox, "write", context);
  await runWriteOperation(confinement, "createDirectoryAt", [path, params.recursive ?? true, params.followSymlinks !== false], context.signal);
  return {};
}
