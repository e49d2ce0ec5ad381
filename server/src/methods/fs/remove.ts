/**
 * fs/remove: a file, a symlink (never its target) or a directory;
 * `recursive` (default true) removes a directory's contents too, and `force`
 * (default true) makes a missing path a success.
 */
import { lstat, rmdir, unlink } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { SessionContext } from "../context.js";
import { openDirectory } from "./descriptor-paths.js";
import { errnoOf, mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { removeNoFollow } from "./no-follow.js";
import { removeTreeIn } from "./remove-tree.js";
import { checkFsSandbox } from "./sandbox-gate.js";

export async function fsRemove(params: ParamsOf<"fs/remove">, context: SessionContext): Promise<ResultOf<"fs/remove">> {
  const path = fsPath(params.path);
  checkFsSandbox(params.sandbox, "write");
  const recursive = params.recursive ?? true;
  const force = params.force ?? true;
  await mappingFsErrors(() =>
    params.followSymlinks === false ? removeNoFollow(path, recursive, force) : remove(path, recursive, force, context.signal),
  );
  return {};
}

async function remove(path: string, recursive: boolean, force: boolean, signal: AbortSignal): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await lstat(path)).isDirectory();
  } catch (error) {
    if (force && errnoOf(error) === "ENOENT") return;
    throw error;
  }
  if (!isDirectory) return unlink(path);
  // Never the whole filesystem: `/` is only ever "removed" as an empty directory (which fails).
  if (!recursive || path === "/") return rmdir(path);
  // The tree goes through descriptors from its parent down (remove-tree.ts).
  const parent = await openDirectory(dirname(path));
  try {
    await removeTreeIn(parent, basename(path), signal);
  } finally {
    await parent.close();
  }
}
