/**
 * A connection's fs/watchMissing watch, as upstream 0.171 keeps it (asked of
 * the binary, docs/upstream-capabilities.md):
 * - one watch per connection; a larger watchId replaces it (even when the
 *   new one then watches nothing), a watchId not larger than every earlier
 *   one is ignored and answered `false`;
 * - `false`, and nothing watched, when there is no missing path, more than
 *   64, a "missing" path that exists (lstat, so a dangling symlink exists)
 *   or cannot be looked up (ENOTDIR, a name too long), a `present` path that
 *   is absent or a symlink, a directory above them that is no directory, or
 *   more than 64 directories above them all;
 * - every directory above the paths that exists is watched, not recursively;
 *   an event naming a missing path, a directory above one, or the present
 *   path (created, removed, renamed, written, touched) fires the watch once:
 *   fs/missingChanged {watchId}, and the watch is over.
 *
 * Node's fs.watch is the file-watching library here: libuv's inotify
 * watches, one per directory (shared by every watch of that directory in the
 * daemon), which is what upstream's watcher does; what chokidar adds (scans,
 * a watch per file, normalized add/unlink events) is what this must not do.
 * Bounds: 64 directories a connection, MAX_WATCHED_DIRECTORIES_PER_DAEMON
 * across the daemon; a watch ends with its connection.
 */
import { watch, type FSWatcher } from "node:fs";
import { lstat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Disposable } from "../../rpc/connection-resources.js";
import {
  MAX_WATCH_MISSING_DIRECTORIES,
  MAX_WATCH_MISSING_PATHS,
  MAX_WATCH_PATH_BYTES,
  MAX_WATCHED_DIRECTORIES_PER_DAEMON,
} from "./limits.js";

/** Directories watched by every connection's watch together (the daemon-wide bound). */
let watchedDirectories = 0;

/** What replace() did: nothing watched, watching, or already changed while the watch was being set up. */
export type WatchOutcome = "not watching" | "watching" | "changed";

export class ConnectionMissingWatch implements Disposable {
  private lastWatchId = 0;
  private current: ActiveWatch | undefined;
  private disposed = false;

  constructor(private readonly fired: (watchId: number) => void) {}

  async replace(watchId: number, missing: readonly string[], present: string | undefined): Promise<WatchOutcome> {
    if (this.disposed || watchId <= this.lastWatchId) return "not watching";
    this.lastWatchId = watchId;
    this.current?.close();
    this.current = undefined;
    const plan = await planWatch(missing, present);
    // Another call (or the connection's end) came while this one looked at the disk: it wins.
    if (!plan || this.disposed || watchId !== this.lastWatchId) return "not watching";
    const active = ActiveWatch.start(plan, () => {
      if (this.current === active) this.current = undefined;
      this.fired(watchId);
    });
    if (!active) return "not watching";
    this.current = active;
    // Something may have appeared between the look and the watch: look again, now that events are seen.
    if (!(await stillAsPlanned(plan))) {
      if (this.current !== active) return "watching";
      active.close();
      this.current = undefined;
      return "changed";
    }
    return "watching";
  }

  dispose(): void {
    this.disposed = true;
    this.current?.close();
    this.current = undefined;
  }
}

interface WatchPlan {
  /** Paths whose events fire the watch: the missing ones, every directory above them, the present one. */
  readonly relevant: ReadonlySet<string>;
  /** The directories above the paths that exist now: each is watched. */
  readonly existingDirectories: readonly string[];
  readonly missing: readonly string[];
  readonly present: string | undefined;
}

/** What to watch, or undefined when upstream would answer `watching: false`. */
async function planWatch(missing: readonly string[], present: string | undefined): Promise<WatchPlan | undefined> {
  if (missing.length === 0 || missing.length > MAX_WATCH_MISSING_PATHS) return undefined;
  const paths = present === undefined ? missing : [...missing, present];
  if (paths.some((path) => Buffer.byteLength(path) > MAX_WATCH_PATH_BYTES)) return undefined;
  const directories = new Set<string>();
  for (const path of paths) for (const directory of ancestors(path)) directories.add(directory);
  if (directories.size > MAX_WATCH_MISSING_DIRECTORIES) return undefined;

  for (const path of missing) if ((await lstatCode(path)) !== "ENOENT") return undefined;
  if (present !== undefined) {
    const stats = await lstat(present).catch(() => undefined);
    if (!stats || stats.isSymbolicLink()) return undefined;
  }
  const existingDirectories: string[] = [];
  for (const directory of directories) {
    const stats = await lstat(directory).catch((error: NodeJS.ErrnoException) => error.code);
    if (stats === "ENOENT") continue;
    if (typeof stats === "string" || stats === undefined || !stats.isDirectory()) return undefined;
    existingDirectories.push(directory);
  }
  return { relevant: new Set([...missing, ...directories, ...(present === undefined ? [] : [present])]), existingDirectories, missing, present };
}

/** Whether the missing paths are all still missing and the present one still there. */
async function stillAsPlanned(plan: WatchPlan): Promise<boolean> {
  for (const path of plan.missing) if ((await lstatCode(path)) !== "ENOENT") return false;
  return plan.present === undefined || (await lstatCode(plan.present)) === "ok";
}

async function lstatCode(path: string): Promise<string> {
  try {
    await lstat(path);
    return "ok";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "EIO";
  }
}

/** Every directory above `path`, up to and including `/`. */
function ancestors(path: string): string[] {
  const result: string[] = [];
  for (let current = dirname(path); ; current = dirname(current)) {
    result.push(current);
    if (dirname(current) === current) return result;
  }
}

/** The watchers of one watch; fires (once) and closes itself at the first relevant event. */
class ActiveWatch {
  private readonly watchers: FSWatcher[] = [];
  private closed = false;

  private constructor(
    private readonly plan: WatchPlan,
    private readonly onChange: () => void,
  ) {}

  /** Watches every existing directory of the plan, or undefined (nothing left watching) when it cannot. */
  static start(plan: WatchPlan, onChange: () => void): ActiveWatch | undefined {
    if (watchedDirectories + plan.existingDirectories.length > MAX_WATCHED_DIRECTORIES_PER_DAEMON) return undefined;
    const active = new ActiveWatch(plan, onChange);
    try {
      for (const directory of plan.existingDirectories) active.watchDirectory(directory);
    } catch {
      // ENOSPC (the host's inotify watches are used up), EMFILE, or the directory went away: the client polls instead.
      active.close();
      return undefined;
    }
    return active;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const watcher of this.watchers) watcher.close();
    watchedDirectories -= this.watchers.length;
    this.watchers.length = 0;
  }

  private watchDirectory(directory: string): void {
    // Not persistent: a watch never keeps the daemon's event loop alive on its own.
    const watcher = watch(directory, { persistent: false }, (_event, name) => {
      // No name: the kernel's queue overflowed, and any event may have been lost.
      if (name === null || this.plan.relevant.has(join(directory, name.toString()))) this.fire();
    });
    // A watched directory that cannot be watched any more (removed, unmounted): what the client must look at again.
    watcher.on("error", () => this.fire());
    this.watchers.push(watcher);
    watchedDirectories++;
  }

  private fire(): void {
    if (this.closed) return;
    this.close();
    this.onChange();
  }
}
