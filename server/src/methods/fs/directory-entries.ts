/**
 * Listing a directory a batch of entries at a time (opendir), never its
 * whole name list at once: a directory of a million names costs the daemon
 * only what the caller keeps. Symlinks are described by their targets, and
 * dropped when the target cannot be read, as upstream's listings do.
 */
import type { Dirent } from "node:fs";
import { opendir, stat } from "node:fs/promises";

export const entryPath = (directory: string, name: string) => (directory === "/" ? `/${name}` : `${directory}/${name}`);

export interface DirectoryEntry {
  readonly name: string;
  readonly isDirectory: boolean;
  readonly isFile: boolean;
}

/** What an entry is, following a symlink; undefined for a symlink whose target cannot be read. */
async function describe(directory: string, dirent: Dirent): Promise<DirectoryEntry | undefined> {
  if (!dirent.isSymbolicLink()) return { name: dirent.name, isDirectory: dirent.isDirectory(), isFile: dirent.isFile() };
  try {
    const target = await stat(entryPath(directory, dirent.name));
    return { name: dirent.name, isDirectory: target.isDirectory(), isFile: target.isFile() };
  } catch {
    return undefined;
  }
}

/** Entries read per trip to the threadpool: each batch is handled in one turn of the event loop. */
const BATCH_ENTRIES = 128;

/**
 * Calls `visit` for each entry in the order the filesystem lists them,
 * until it returns false, yielding to the event loop between batches.
 */
export async function forEachEntry(directory: string, visit: (entry: DirectoryEntry) => boolean): Promise<void> {
  const dir = await opendir(directory, { bufferSize: BATCH_ENTRIES });
  // Leaving the loop early closes the directory.
  for await (const dirent of dir) {
    const entry = await describe(directory, dirent);
    if (entry && !visit(entry)) break;
  }
}
