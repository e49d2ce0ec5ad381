/**
 * How the daemon keeps hold of everything a child starts, so terminate,
 * expiry and shutdown kill whole trees at a cost that grows with the trees
 * themselves. Two mechanisms, chosen once at start-up (--process-containment):
 *
 * - "cgroup" (cgroup v2 with cgroup.kill, Linux 5.14+, where the daemon may
 *   create cgroups below its own: root, or a delegated subtree): each child
 *   is born into a cgroup of its own, and SIGKILL goes to the cgroup in one
 *   write. The kernel keeps every descendant there, whatever it does
 *   (setsid, double fork, its parent's exit). See cgroup-trees.ts.
 * - "process-tree" (anywhere else): the child's process group, plus a walk
 *   down /proc's children lists from the child and from what an earlier
 *   SIGTERM found. It misses only a process that left the group and the
 *   session and whose parent died before anyone looked. See proc-trees.ts.
 */
import { CgroupTrees } from "./cgroup-trees.js";
import { ProcTrees } from "./proc-trees.js";

/** One child's tree. */
export interface TreeHandle {
  /** The cgroup the child must enter before it execs, or undefined. */
  readonly cgroup: string | undefined;
  /** The child's pid, once it is known. */
  bind(pid: number): void;
  /** SIGTERM (or another signal) to every member: terminate's first step. */
  signalAll(signal: NodeJS.Signals): void;
  /** SIGKILL to every member, atomically where the mechanism allows. */
  kill(): void;
  /** SIGKILL to the child's process group only: a closed child's leftovers. */
  killGroup(): void;
  /** The child closed: what is left of its tree (if anything) is killed with its owner. */
  release(): void;
}

export type ContainmentKind = "cgroup" | "process-tree";

export interface ProcessTrees {
  readonly kind: ContainmentKind;
  /** The daemon's cgroup directory, every child's cgroup below it (cgroup containment only). */
  readonly cgroupRoot: string | undefined;
  /** A tree for a child about to start, owned by `owner` (a session). */
  create(owner: object): TreeHandle;
  /** SIGKILL to every tree of `owner`, including what closed children left: session expiry. */
  killOwner(owner: object): void;
  /** SIGKILL to every tree: shutdown. */
  killAll(): void;
  /** Removes what the mechanism made (after killAll), waiting at most `timeoutMs`. */
  dispose(timeoutMs: number): Promise<void>;
}

/** Picks the containment: `requested` "auto" takes a cgroup where one works. */
export function createProcessTrees(requested: "auto" | ContainmentKind): ProcessTrees {
  if (requested === "process-tree") return new ProcTrees();
  const cgroups = CgroupTrees.create();
  if (cgroups) return cgroups;
  if (requested === "cgroup") throw new Error("--process-containment cgroup: no cgroup v2 with cgroup.kill that this daemon may create cgroups in");
  return new ProcTrees();
}
