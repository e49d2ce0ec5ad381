/**
 * fs/copy: a regular file, a symlink (as a symlink) or, with `recursive`, a
 * directory tree, never into itself; other kinds are refused.
 */
import { lstat } from "node:fs/promises";
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidRequest } from "../../rpc/rpc-error.js";
import type { SessionContext } from "../context.js";
import { copyDirectory, copyRegularFile, copySymlink, landsInside, unsupportedKind } from "./copy-entries.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { checkFsSandbox } from "./sandbox-gate.js";

export async function fsCopy(params: ParamsOf<"fs/copy">, context: SessionContext): Promise<ResultOf<"fs/copy">> {
  const source = fsPath(params.sourcePath);
  const destination = fsPath(params.destinationPath);
  checkFsSandbox(params.sandbox, "write");
  await mappingFsErrors(async () => {
    const stats = await lstat(source);
    if (stats.isDirectory()) {
      if (!params.recursive) throw invalidRequest("fs/copy requires recursive: true when sourcePath is a directory");
      if (await landsInside(source, destination)) {
        throw invalidRequest("fs/copy cannot copy a directory to itself or one of its descendants");
      }
      return copyDirectory(source, destination, context.signal);
    }
    if (stats.isSymbolicLink()) return copySymlink(source, destination);
    if (stats.isFile()) return copyRegularFile(source, destination, context.signal);
    throw unsupportedKind();
  });
  return {};
}
