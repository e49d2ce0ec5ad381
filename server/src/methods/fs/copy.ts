/**
 * fs/copy: a regular file, a symlink (as a symlink) or, with `recursive`, a
 * directory tree, never into itself; other kinds are refused
 * (write-operations.ts).
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { fsPath } from "./fs-path.js";
import { runWriteOperation } from "./run-operation.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsConfinement, hiddenFilesFor } from "./sandbox-gate.js";

export async function fsCopy(params: ParamsOf<"fs/copy">, context: SessionContext): Promise<ResultOf<"fs/copy">> {
  const source = fsPath(params.sourcePath);
  const destination = fsPath(params.destinationPath);
  const confinement = await fsConfinement(params.sandbox, "write", context);
  if (!confinement) await mappingFsErrors(async () => (await hiddenFilesFor(params.sandbox, context))?.checkPath(source, false));
  await runWriteOperation(confinement, "copyPath", [source, destination, params.recursive, confinement !== undefined], context.signal);
  return {};
}
