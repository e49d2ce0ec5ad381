/**
 * Private directories of daemons that were SIGKILLed with everything they
 * started. The spawner's FIFO directory ($TMPDIR/execmux-fifos-<pid>-<random>)
 * is removed by the spawner helper as it exits, and by the daemon at
 * shutdown; when every execmux process dies at once nobody is left to, so
 * the next daemon does, as it removes dead daemons' cgroups
 * (process/stale-cgroups.ts): once, at start, a bounded read of $TMPDIR.
 *
 * Only this user's directories whose pid is no longer running go: one whose
 * pid is alive is kept, even if that pid now names another program (a
 * leftover kept is better than a live daemon's removed). A $TMPDIR shared by
 * daemons in different PID namespaces (one /tmp mounted into several
 * containers) would defeat the pid check: give each its own $TMPDIR.
 */
import { lstatSync, opendirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive } from "../process/is-alive.js";

export const FIFO_DIRECTORY_PREFIX = "execmux-fifos-";
const FIFO_DIRECTORY = /^execmux-fifos-(\d+)-[A-Za-z0-9]{6}$/;
/** At most this many entries of $TMPDIR are looked at: a start costs a bounded read, whatever else lives there. */
const MAX_ENTRIES_LOOKED_AT = 16_384;

/** Removes the FIFO directories in `parent` (default $TMPDIR) that dead daemons of this user left; returns their names. */
export function removeStaleFifoDirectories(parent = tmpdir()): string[] {
  const removed: string[] = [];
  let directory;
  try {
    directory = opendirSync(parent);
  } catch {
    return removed;
  }
  const uid = process.getuid?.() ?? 0;
  try {
    for (let looked = 0; looked < MAX_ENTRIES_LOOKED_AT; looked++) {
      const entry = directory.readSync();
      if (!entry) break;
      const match = entry.isDirectory() ? FIFO_DIRECTORY.exec(entry.name) : null;
      if (!match) continue;
      const pid = Number(match[1]);
      if (pid === process.pid || isAlive(pid)) continue;
      const path = join(parent, entry.name);
      try {
        if (lstatSync(path).uid !== uid) continue;
        rmSync(path, { recursive: true, force: true });
        removed.push(entry.name);
      } catch {
        // Gone already, or not ours to remove.
      }
    }
  } finally {
    directory.closeSync();
  }
  return removed;
}
