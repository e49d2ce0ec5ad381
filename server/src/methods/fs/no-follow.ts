/**
 * `followSymlinks: false`, as upstream's exec-server implements it (its
 * no_follow module, checked against codex 0.169.0): no component of the
 * path may be a symlink. A symlinked directory on the way fails with
 * ENOTDIR; at the end, opening a symlink fails with ELOOP, and metadata or
 * removal of one is refused as "path contains a symbolic link". Each step is
 * taken relative to the directory opened before it (descriptor-paths.ts),
 * so nothing can swap a symlink in between a check and its use.
 */
import { constants, type Stats } from "node:fs";
import { lstat, mkdir, open, rmdir, unlink, type FileHandle } from "node:fs/promises";
import { internalError, invalidRequest } from "../../errors/rpc-error.js";
import { componentsOf, descend, inDirectory, openChildDirectory, openRoot, withParentDirectory } from "./descriptor-paths.js";
import { errnoOf } from "./fs-error.js";

const { O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_TRUNC, O_WRONLY } = constants;

const mustNameAnEntry = () => invalidRequest("path must name an entry");
const symlinkRefused = () => invalidRequest("path contains a symbolic link");

/** Metadata of the path itself; a symlink at the end is refused. */
export async function metadataNoFollow(path: string): Promise<Stats> {
  const stats = await withParentDirectory(path, (parent, name) => lstat(name === undefined ? "/" : inDirectory(parent, name)));
  if (stats.isSymbolicLink()) throw symlinkRefused();
  return stats;
}

/**
 * Opens a file for reading (non-blocking, so a FIFO cannot hold the call);
 * anything but a regular file is refused with upstream's words.
 */
export async function openForReadNoFollow(path: string): Promise<FileHandle> {
  const file = await withParentDirectory(path, (parent, name) => {
    if (name === undefined) throw mustNameAnEntry();
    return open(inDirectory(parent, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  });
  try {
    if (!(await file.stat()).isFile()) throw invalidRequest("path is not a regular file");
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}

/**
 * Creates a file for writing, truncated unless `truncate` is false
 * (non-blocking: a FIFO without a reader fails with ENXIO instead of waiting).
 */
export function openForWriteNoFollow(path: string, truncate = true): Promise<FileHandle> {
  return withParentDirectory(path, (parent, name) => {
    if (name === undefined) throw mustNameAnEntry();
    return open(inDirectory(parent, name), O_WRONLY | O_CREAT | (truncate ? O_TRUNC : 0) | O_NOFOLLOW | O_NONBLOCK, 0o666);
  });
}

export async function createDirectoryNoFollow(path: string, recursive: boolean): Promise<void> {
  if (!recursive) {
    await withParentDirectory(path, async (parent, name) => {
      if (name === undefined) throw internalError("directory already exists");
      await mkdir(inDirectory(parent, name));
    });
    return;
  }
  // Every component must be a real directory, made when missing.
  let directory = await openRoot();
  try {
    for (const name of componentsOf(path)) {
      const next = await openOrCreateDirectory(directory, name);
      await directory.close();
      directory = next;
    }
  } finally {
    await directory.close();
  }
}

async function openOrCreateDirectory(parent: FileHandle, name: string): Promise<FileHandle> {
  try {
    return await openChildDirectory(parent, name);
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
  }
  try {
    await mkdir(inDirectory(parent, name));
  } catch (error) {
    // Someone else made it meanwhile: open what is there (a symlink still fails).
    if (errnoOf(error) !== "EEXIST") throw error;
  }
  return openChildDirectory(parent, name);
}

/**
 * Removes a file, a symlink-free path's last entry, or an empty directory.
 * Recursive removal is refused outright, as upstream does.
 */
export async function removeNoFollow(path: string, recursive: boolean, force: boolean): Promise<void> {
  if (recursive) throw internalError("recursive no-follow removal is unsupported");
  const names = componentsOf(path);
  const name = names.pop();
  if (name === undefined) throw mustNameAnEntry();
  try {
    const parent = await descend(await openRoot(), names);
    try {
      const entry = inDirectory(parent, name);
      const stats = await lstat(entry);
      if (stats.isSymbolicLink()) throw symlinkRefused();
      await (stats.isDirectory() ? rmdir(entry) : unlink(entry));
    } finally {
      await parent.close();
    }
  } catch (error) {
    if (!(force && errnoOf(error) === "ENOENT")) throw error;
  }
}
