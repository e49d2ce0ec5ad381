/**
 * Removing a directory and everything below it as Rust's remove_dir_all
 * does: each directory is opened without following symlinks and its entries
 * are removed relative to it (descriptor-paths.ts), so swapping a directory
 * for a symlink mid-way cannot send the removal outside the tree; an entry
 * that vanished meanwhile is not an error. Entries are read a batch at a
 * time, and the removal stops when its connection closes.
 */
import { opendir, rmdir, unlink, type FileHandle } from "node:fs/promises";
import { connectionClosed } from "../../errors/rpc-error.js";
import { descriptorPath, inDirectory, openChildDirectory } from "./descriptor-paths.js";
import { errnoOf } from "./fs-error.js";

const ignoringNotFound = (error: unknown) => {
  if (errnoOf(error) !== "ENOENT") throw error;
};

/** Removes `name` in `parent` and, if it is a directory, everything in it. */
export async function removeTreeIn(parent: FileHandle, name: string, signal: AbortSignal): Promise<void> {
  let directory: FileHandle;
  try {
    directory = await openChildDirectory(parent, name);
  } catch (error) {
    // Not a directory (or a symlink to one): remove the entry itself.
    if (errnoOf(error) === "ENOTDIR") return unlink(inDirectory(parent, name)).catch(ignoringNotFound);
    throw error;
  }
  try {
    await removeChildren(directory, signal);
  } finally {
    await directory.close();
  }
  await rmdir(inDirectory(parent, name)).catch(ignoringNotFound);
}

async function removeChildren(directory: FileHandle, signal: AbortSignal): Promise<void> {
  // Removing entries while listing them is safe: each is removed once listed.
  for await (const dirent of await opendir(descriptorPath(directory))) {
    if (signal.aborted) throw connectionClosed();
    const removal = dirent.isDirectory() ? removeTreeIn(directory, dirent.name, signal) : unlink(inDirectory(directory, dirent.name));
    await removal.catch(ignoringNotFound);
  }
}
