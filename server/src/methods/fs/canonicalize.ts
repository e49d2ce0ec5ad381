/** fs/canonicalize: the path with every symlink, `.` and `..` resolved, as a file URI. */
import { realpath } from "node:fs/promises";
import { pathToFileUri, type ParamsOf, type ResultOf } from "@execmux/shared";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { checkDirectRead } from "./sandbox-gate.js";

export async function fsCanonicalize(params: ParamsOf<"fs/canonicalize">): Promise<ResultOf<"fs/canonicalize">> {
  const path = fsPath(params.path);
  checkDirectRead(params.sandbox);
  return { path: pathToFileUri(await mappingFsErrors(() => realpath(path))) };
}
