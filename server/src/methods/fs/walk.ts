/**
 * fs/walk: a bounded breadth-first listing of a tree, as upstream's
 * sync_walk: names sorted (UTF-8 order) within each directory; file symlinks
 * skipped, directory symlinks followed only when asked (each directory
 * visited once, by its canonical path); hidden directories listed but not
 * entered with `pruneHiddenDirectories`; errors below the root reported in
 * `errors`; `truncated` once a limit or the reply's size estimate is hit.
 * Every step awaits the filesystem, so a huge tree never holds the event
 * loop, and the walk stops when the connection closes.
 */
import { realpath } from "node:fs/promises";
import type { FsWalkOptions, ParamsOf, ResultOf } from "@execmux/shared";
import { connectionClosed, invalidRequest } from "../../rpc/rpc-error.js";
import type { SessionContext } from "../context.js";
import { entryPath, forEachEntry } from "./directory-entries.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { MAX_WALK_DEPTH, MAX_WALK_DIRECTORIES, MAX_WALK_ENTRIES } from "./limits.js";
import { SmallestNames } from "./name-order.js";
import { pathMetadata } from "./path-metadata.js";
import { withReplyLane } from "./reply-lane.js";
import { checkDirectRead, hiddenFilesFor } from "./sandbox-gate.js";
import { MetadataLookahead } from "./walk-lookahead.js";
import { WalkFull, WalkOutcome } from "./walk-outcome.js";

function checkLimits(options: FsWalkOptions): void {
  if (options.maxDirectories === 0 || options.maxEntries === 0) {
    throw invalidRequest("filesystem walk limits must be greater than zero");
  }
  if (options.maxDepth > MAX_WALK_DEPTH || options.maxDirectories > MAX_WALK_DIRECTORIES || options.maxEntries > MAX_WALK_ENTRIES) {
    throw invalidRequest(
      `filesystem walk limits exceed maximums: depth=${MAX_WALK_DEPTH}, directories=${MAX_WALK_DIRECTORIES}, entries=${MAX_WALK_ENTRIES}`,
    );
  }
}

export async function fsWalk(params: ParamsOf<"fs/walk">, context: SessionContext): Promise<ResultOf<"fs/walk">> {
  checkLimits(params.options);
  const root = fsPath(params.path);
  checkDirectRead(params.sandbox);
  return withReplyLane(context, async () => {
    await mappingFsErrors(async () => (await hiddenFilesFor(params.sandbox, context))?.checkPath(root));
    const { stats, isSymlink } = await mappingFsErrors(() => pathMetadata(root));
    const outcome = new WalkOutcome();
    if (!stats.isDirectory() || (isSymlink && !params.options.followDirectorySymlinks)) return outcome.result;
    const rootIdentity = params.options.followDirectorySymlinks ? await mappingFsErrors(() => realpath(root)) : root;
    try {
      await walkFrom(root, rootIdentity, params.options, outcome, context.signal);
    } catch (error) {
      if (!(error instanceof WalkFull)) throw error;
    }
    return outcome.result;
  });
}

async function walkFrom(
  root: string,
  rootIdentity: string,
  options: FsWalkOptions,
  outcome: WalkOutcome,
  signal: AbortSignal,
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
        return !signal.aborted;
      });
      names = smallest.sorted();
    } catch (error) {
      outcome.addError(directory, error);
      continue;
    }
    const lookups = new MetadataLookahead(directory, names);
    for (const [index, name] of names.entries()) {
      if (signal.aborted) throw connectionClosed();
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
