/**
 * Cgroup directories of daemons that died with everything they started.
 * A daemon's directory (`execmux-<pid>-<random>`, cgroup-trees.ts) is
 * removed by the daemon at shutdown, or by its spawner when the daemon dies
 * alone; when every execmux process is SIGKILLed at once nobody is left to
 * remove it, so the next daemon started in the same cgroup does, once its
 * owner is gone and nothing lives in it. Looked at once, at start, never on
 * a per-process path.
 */
import { opendirSync, readdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "./is-alive.js";

/** A daemon's directory: the pid of the process that made it, and 8 random hex digits. */
const DAEMON_DIRECTORY = /^execmux-(\d+)-[0-9a-f]{8}$/;
/** At most this many entries of the parent cgroup are looked at: a start costs a bounded read, whatever else lives there. */
const MAX_ENTRIES_LOOKED_AT = 4_096;

/** Removes a daemon's directory with its per-child cgroups, unless something still lives in it (rmdir refuses a populated cgroup). */
export function removeDaemonCgroup(root: string): void {
  try {
    for (const entry of readdirSync(root, { withFileTypes: true })) if (entry.isDirectory()) rmdirSync(join(root, entry.name));
    rmdirSync(root);
  } catch {
    // Still populated, or gone already.
  }
}

/**
 * Removes the empty directories that dead daemons left in `parent` (the
 * cgroup the new daemon's own directory goes into). A
 * directory whose pid is alive is left alone, even if that pid now names
 * another program: a leftover kept is better than a live daemon's removed.
 */
export function removeStaleDaemonCgroups(parent: string): void {
  let directory;
  try {
    directory = opendirSync(parent);
  } catch {
    return;
  }
  try {
    for (let looked = 0; looked < MAX_ENTRIES_LOOKED_AT; looked++) {
      const entry = directory.readSync();
      if (!entry) break;
      const match = entry.isDirectory() ? DAEMON_DIRECTORY.exec(entry.name) : null;
      if (!match || isAlive(Number(match[1]))) continue;
      removeDaemonCgroup(join(parent, entry.name));
    }
  } finally {
    directory.closeSync();
  }
}
