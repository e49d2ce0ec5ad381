/** fs/createDirectory: `recursive` (the default) makes missing parents and accepts an existing directory. */
import { mkdir } from "node:fs/promises";
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { createDirectoryAll } from "./create-directory-all.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { createDirectoryNoFollow } from "./no-follow.js";
import { checkFsSandbox } from "./sandbox-gate.js";

export async function fsCreateDirectory(params: ParamsOf<"fs/createDirectory">): Promise<ResultOf<"fs/createDirectory">> {
  const path = fsPath(params.path);
  checkFsSandbox(params.sandbox, "write");
  const recursive = params.recursive ?? true;
  await mappingFsErrors(() =>
    params.followSymlinks === false ? createDirectoryNoFollow(path, recursive) : recursive ? createDirectoryAll(path) : mkdir(path),
  );
  return {};
}
