/**
 * fs/walk's traversal as one function of plain arguments (see walk.ts for
 * what it answers): run in the daemon, or inside the sandbox through a
 * confined helper (run-operation.ts) when the call's profile does not read
 * the whole disk. Either way the same code sees the same tree the profile
 * lets it see: a denied directory is an entry of `errors`, as upstream's.
 */
import { realpath } from "node:fs/promises";
import type { FsWalkOptions, FsWalkResult } from "@execmux/shared";
import { connectionClosed } from "../../errors/rpc-error.js";
import { entryPath, forEachEntry } from "./directory-entries.js";
import { pathMetadata } from "./path-metadata.js";
import { SmallestNames } from "./name-order.js";
import { MetadataLookahead } from "./walk-lookahead.js";
import { WalkFull, WalkOutcome } from "./walk-outcome.js";

export async function walkTree(root: string, options: FsWalkOptions, signal: AbortSignal | undefined): Promise<FsWalkResult> {
  const { stats, isSymlink } = await pathMetadata(root);
  const outcome = new WalkOutcome();
  if (!stats.isDirectory() || (isSymlink && !options.followDirectorySymlinks)) return outcome.result;
  const rootIdentity = options.followDirectorySymlinks ? await realpath(root) : root;
  try {
    await walkFrom(root, rootIdentity, options, outcome, signal);
  } catch (error) {
    if (!(error instanceof WalkFull)) throw error;
  }
  return outcome.result;
}

async function walkFrom(
  root: string,
  rootIdentity: string,
  options: FsWalkOptions,
  outcome: WalkOutcome,
  signal: AbortSignal | undefined,
): Promise<void> {
  const queue: { path: string; depth: number }[] = [{ path: root, depth: 0 }];
  const visited = new Set([rootIdentity]);
  let directories = 1;
  let examined = 0;
  for (let next = queue.shift(); next; next = queue.shift()) {
    const { path: directory, depth } = next;
    let names: string[];
    try {
      // One name past the entry budget is enough to know the walk is truncated.
      const smallest = new SmallestNames(options.maxEntries - examined + 1);
      await forEachEntry(directory, ({ name }) => {
        smallest.add(name);
        return !signal?.aborted;
      });
      names = smallest.sorted();
    } catch (error) {
      outcome.addError(directory, error);
      continue;
    }
    const lookups = new MetadataLookahead(directory, names);
    for (const [index, name] of names.entries()) {
      if (signal?.aborted) throw connectionClosed();
      if (examined === options.maxEntries) outcome.stop();
      examined++;
      const path = entryPath(directory, name);
      const metadata = await lookups.get(index, options.maxEntries - examined);
      if (metadata instanceof Error) {
        outcome.addError(path, metadata);
        continue;
      }
      const { stats, isSymlink } = metadata;
      if (isSymlink && (!options.followDirectorySymlinks || !stats.isDirectory())) continue;
      if (!stats.isDirectory() && !stats.isFile()) continue;
      outcome.addEntry(path, stats.isDirectory() ? "directory" : "file");
      if (!stats.isDirectory() || depth >= options.maxDepth) continue;
      if (options.pruneHiddenDirectories && name.startsWith(".")) continue;
      let identity = path;
      if (options.followDirectorySymlinks) {
        try {
          identity = await realpath(path);
        } catch (error) {
          outcome.addError(path, error);
          continue;
        }
      }
      if (visited.has(identity)) continue;
      visited.add(identity);
      if (directories === options.maxDirectories) {
        outcome.result.truncated = true;
      } else {
        directories++;
        queue.push({ path, depth: depth + 1 });
      }
    }
  }
}
