/**
 * The fs/* writes as stateless functions of plain arguments, so that the
 * very same code runs in the daemon (a profile that writes the whole disk,
 * or no sandbox) or inside a confined helper (run-operation.ts), and fails
 * there with the same errors, mapped the same way.
 *
 * Each takes the connection's AbortSignal last; inside a helper there is
 * none (the helper is killed instead), so it may be undefined.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, rmdir, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { invalidRequest } from "../../errors/rpc-error.js";
import { copyDirectory, copyRegularFile, copySymlink, landsInside, unsupportedKind } from "./copy-entries.js";
import { createDirectoryAll } from "./create-directory-all.js";
import { openDirectory } from "./descriptor-paths.js";
import { errnoOf } from "./fs-error.js";
import { refuseHardLinkedFile } from "./hard-links.js";
import { createDirectoryNoFollow, openForWriteNoFollow, removeNoFollow } from "./no-follow.js";
import { removeTreeIn } from "./remove-tree.js";

const { O_CREAT, O_NONBLOCK, O_TRUNC, O_WRONLY } = constants;

/** Never aborts: for a call made inside a helper, which is killed instead. */
const NEVER = new AbortController().signal;

export interface WriteFileOptions {
  readonly followSymlinks: boolean;
  /** Set under a sandbox: see hard-links.ts. */
  readonly refuseHardLinked: boolean;
}

/** fs/writeFile: create or truncate `path` and write `bytes`. */
export async function writeFileBytes(path: string, bytes: Uint8Array, options: WriteFileOptions, _signal: AbortSignal | undefined): Promise<void> {
  // Truncated only once the file is known to be writable here (hard-links.ts).
  const truncate = !options.refuseHardLinked;
  // Non-blocking: writing to a FIFO nobody reads fails (ENXIO) instead of
  // holding the call, and a threadpool thread, until someone does.
  const file: FileHandle = !options.followSymlinks
    ? await openForWriteNoFollow(path, truncate)
    : await open(path, O_WRONLY | O_CREAT | O_NONBLOCK | (truncate ? O_TRUNC : 0), 0o666);
  try {
    if (!truncate) {
      refuseHardLinkedFile(path, await file.stat());
      await file.truncate(0);
    }
    await file.writeFile(bytes);
  } finally {
    await file.close();
  }
}

/** fs/createDirectory: `recursive` makes missing parents and accepts an existing directory. */
export async function createDirectoryAt(path: string, recursive: boolean, followSymlinks: boolean, _signal: AbortSignal | undefined): Promise<void> {
  if (!followSymlinks) return createDirectoryNoFollow(path, recursive);
  return recursive ? createDirectoryAll(path) : mkdir(path).then(() => undefined);
}

/** fs/remove: a file, a symlink (never its target) or a directory (its contents too with `recursive`). */
export async function removePath(path: string, recursive: boolean, force: boolean, followSymlinks: boolean, signal: AbortSignal | undefined): Promise<void> {
  if (!followSymlinks) return removeNoFollow(path, recursive, force);
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
    await removeTreeIn(parent, basename(path), signal ?? NEVER);
  } finally {
    await parent.close();
  }
}

/** fs/copy: a regular file, a symlink (as a symlink) or, with `recursive`, a directory tree, never into itself. */
export async function copyPath(
  source: string,
  destination: string,
  recursive: boolean,
  refuseHardLinkedDestination: boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  const live = signal ?? NEVER;
  const stats = await lstat(source);
  if (stats.isDirectory()) {
    if (!recursive) throw invalidRequest("fs/copy requires recursive: true when sourcePath is a directory");
    if (await landsInside(source, destination)) throw invalidRequest("fs/copy cannot copy a directory to itself or one of its descendants");
    return copyDirectory(source, destination, live, refuseHardLinkedDestination);
  }
  if (stats.isSymbolicLink()) return copySymlink(source, destination);
  if (stats.isFile()) return copyRegularFile(source, destination, live, refuseHardLinkedDestination);
  throw unsupportedKind();
}
