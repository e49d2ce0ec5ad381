/**
 * fs/walk: a bounded breadth-first listing of a tree, as upstream's
 * sync_walk: names sorted (UTF-8 order) within each directory; file symlinks
 * skipped, directory symlinks followed only when asked (each directory
 * visited once, by its canonical path); hidden directories listed but not
 * entered with `pruneHiddenDirectories`; errors below the root reported in
 * `errors`; `truncated` once a limit or the reply's size estimate is hit.
 * Every step awaits the filesystem, so a huge tree never holds the event
 * loop, and the walk stops when the connection closes. The traversal itself
 * is walk-tree.ts, run confined under a profile that does not read the
 * whole disk.
 */
import type { FsWalkOptions, ParamsOf, ResultOf } from "@execmux/shared";
import { invalidRequest } from "../../errors/rpc-error.js";
import type { SessionContext } from "../context.js";
import { fsPath } from "./fs-path.js";
import { MAX_WALK_DEPTH, MAX_WALK_DIRECTORIES, MAX_WALK_ENTRIES } from "./limits.js";
import { withReplyLane } from "./reply-lane.js";
import { mappingFsErrors } from "./fs-error.js";
import { runWalkOperation } from "./run-operation.js";
import { fsConfinement, hiddenFilesFor } from "./sandbox-gate.js";

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
  // Under a profile that does not read the whole disk, the walk runs inside the sandbox (capability sandboxedFileStreaming),
  // whose mounts hide the daemon's own files; in the daemon, under a profile, its root must not be one of them.
  const confinement = await fsConfinement(params.sandbox, "read", context);
  return withReplyLane(context, async () => {
    if (!confinement) await mappingFsErrors(async () => (await hiddenFilesFor(params.sandbox, context))?.checkPath(root));
    return runWalkOperation(confinement, "walkTree", [root, params.options], context.signal);
  });
}
