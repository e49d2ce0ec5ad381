/**
 * fs/remove: a file, a symlink (never its target) or a directory;
 * `recursive` (default true) removes a directory's contents too, and `force`
 * (default true) makes a missing path a success (write-operations.ts).
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { fsPath } from "./fs-path.js";
import { runWriteOperation } from "./run-operation.js";
import { fsConfinement } from "./sandbox-gate.js";

export async function fsRemove(params: ParamsOf<"fs/remove">, context: SessionContext): Promise<ResultOf<"fs/remove">> {
  const path = fsPath(params.path);
  const confinement = await fsConfinement(params.sandbox, "write", context);
  const args = [path, params.recursive ?? true, params.force ?? true, params.followSymlinks !== false] as const;
  await runWriteOperation(confinement, "removePath", [...args], context.signal);
  return {};
}
