/** fs/canonicalize: the path with every symlink, `.` and `..` resolved, as a file URI. */
import { pathToFileUri } from "@execmux/shared/core";
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { fsPath } from "./fs-path.js";
import { runReadOperation } from "./run-operation.js";
import { fsConfinement } from "./sandbox-gate.js";

export async function fsCanonicalize(params: ParamsOf<"fs/canonicalize">, context: SessionContext): Promise<ResultOf<"fs/canonicalize">> {
  const path = fsPath(params.path);
  const confinement = await fsConfinement(params.sandbox, "read", context);
  return { path: pathToFileUri(await runReadOperation(confinement, "canonicalPath", [path], context.signal)) };
}
