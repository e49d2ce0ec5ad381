/**
 * The memory this daemon may use: the tightest memory limit of its cgroup
 * and every cgroup above it (cgroup v2 `memory.max`, or v1's
 * `hierarchical_memory_limit`), or the machine's memory where none is set.
 * Budgets that hold bytes in memory take their default as a share of it, so
 * the same defaults fit a 512 MiB sandbox and a 64 GiB host; a configured
 * value always wins. Read once, on first use: nothing is probed at start-up.
 */
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";
import { dirname, join } from "node:path";
import { ownCgroupDirectory } from "./own-cgroup.js";

const CGROUP_ROOT = "/sys/fs/cgroup";
/** cgroup v1 writes "no limit" as a page-aligned LONG_MAX; anything this large is no limit. */
const UNLIMITED = 2 ** 60;

const readNumber = (path: string): number | undefined => {
  try {
    const text = readFileSync(path, "latin1").trim();
    const value = Number(text);
    return text !== "max" && Number.isFinite(value) && value > 0 && value < UNLIMITED ? value : undefined;
  } catch {
    return undefined;
  }
};

/** cgroup v2: the smallest memory.max from the daemon's cgroup up to the root. */
function cgroupV2Limit(): number | undefined {
  const own = ownCgroupDirectory();
  if (own === undefined) return undefined;
  let tightest: number | undefined;
  for (let directory = own; directory.startsWith(CGROUP_ROOT); directory = dirname(directory)) {
    const limit = readNumber(join(directory, "memory.max"));
    if (limit !== undefined) tightest = Math.min(tightest ?? limit, limit);
    if (directory === CGROUP_ROOT) break;
  }
  return tightest;
}

/** cgroup v1: the memory controller's hierarchical limit (its own and its ancestors'), where the controller is mounted. */
function cgroupV1Limit(): number | undefined {
  let path: string | undefined;
  try {
    const line = readFileSync("/proc/self/cgroup", "latin1").split("\n").find((entry) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(entry));
    path = line?.slice(line.lastIndexOf(":") + 1);
  } catch {
    return undefined;
  }
  if (path === undefined) return undefined;
  // In a container the controller is often mounted at the container's own cgroup: its path is then not below the mount.
  for (const directory of [join(CGROUP_ROOT, "memory", path), join(CGROUP_ROOT, "memory")]) {
    try {
      const stat = readFileSync(join(directory, "memory.stat"), "latin1");
      const match = /^hierarchical_memory_limit (\d+)$/m.exec(stat);
      const limit = match ? Number(match[1]) : undefined;
      if (limit !== undefined) return limit > 0 && limit < UNLIMITED ? limit : undefined;
    } catch {
      // not there: the next place
    }
  }
  return undefined;
}

let cached: { bytes: number; source: "cgroup" | "machine" } | undefined;

/** Bytes of memory the daemon may use, and whether a cgroup or the machine's size says so. */
export function daemonMemory(): { bytes: number; source: "cgroup" | "machine" } {
  if (cached) return cached;
  const machine = totalmem();
  const cgroup = cgroupV2Limit() ?? cgroupV1Limit();
  cached = cgroup !== undefined && cgroup < machine ? { bytes: cgroup, source: "cgroup" } : { bytes: machine, source: "machine" };
  return cached;
}

/**
 * A budget's default: `fraction` of the daemon's memory, kept within
 * [`least`, `most`] (whole bytes). `configured` (above 0) wins.
 */
export function shareOfMemory(configured: number, fraction: number, least: number, most: number): number {
  if (configured > 0) return configured;
  return Math.floor(Math.min(most, Math.max(least, daemonMemory().bytes * fraction)));
}
