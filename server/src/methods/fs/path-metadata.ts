/**
 * What a path is: its own metadata and, for a symlink, its target's (which
 * fails for a broken link), as upstream's getMetadata and walk look at paths.
 */
import type { Stats } from "node:fs";
import { lstat, stat } from "node:fs/promises";

export interface PathMetadata {
  /** The target's, for a symlink. */
  readonly stats: Stats;
  readonly isSymlink: boolean;
}

export async function pathMetadata(path: string): Promise<PathMetadata> {
  const own = await lstat(path);
  return own.isSymbolicLink() ? { stats: await stat(path), isSymlink: true } : { stats: own, isSymlink: false };
}
