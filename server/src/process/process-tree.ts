/**
 * Finding and signalling what a child started, from /proc, without a cgroup
 * (see cgroup-trees.ts for the mechanism used where one is available).
 * Every child leads a new session and process group (setsid), so its pid
 * names both. A group signal reaches ordinary descendants; a walk down
 * /proc/PID/task/TID/children reaches those that moved to a group or a
 * session of their own while their parent lives. Both cost what the tree
 * holds, never a look at every process of the machine; only a batch (expiry,
 * shutdown) scans /proc, once for all of its trees.
 */
import { readdirSync, readFileSync } from "node:fs";

/** A process as found at one moment: its start time tells a reused pid from it. */
export interface Member {
  readonly pid: number;
  readonly startTime: string;
}

function sendSignal(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false; // ESRCH: nothing left there
  }
}

/** Signals the process group led by `leaderPid`. Returns false when the group is empty. */
export function signalGroup(leaderPid: number, signal: NodeJS.Signals): boolean {
  return sendSignal(-leaderPid, signal);
}

/** The fields of /proc/PID/stat after the command name: state ppid pgrp session ... (index 19: start time). */
function statFields(path: string): string[] | undefined {
  try {
    const stat = readFileSync(path, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined; // exited while we looked
  }
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

/** `rootPid` and everything below it that still has a living chain of parents up to it. */
export function treeOf(rootPid: number): Member[] {
  const members: Member[] = [];
  const seen = new Set<number>();
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const fields = statFields(`/proc/${pid}/stat`);
    if (!fields || fields[0] === "Z") continue;
    members.push({ pid, startTime: fields[19]! });
    for (const task of readdirSafe(`/proc/${pid}/task`)) {
      try {
        for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "latin1").split(" ")) {
          if (child !== "") pending.push(Number(child));
        }
      } catch {
        // the thread or the process is gone
      }
    }
  }
  return members;
}

/** Signals each member that is still the process it was (same pid, same start time). */
export function signalMembers(members: Iterable<Member>, signal: NodeJS.Signals): void {
  for (const member of members) {
    if (member.pid === process.pid) continue;
    if (statFields(`/proc/${member.pid}/stat`)?.[19] !== member.startTime) continue;
    sendSignal(member.pid, signal);
  }
}

/**
 * One scan of /proc for a whole batch: every process in a process group or
 * session led by one of `leaders`, and everything below those and below
 * `extraRoots`. The cost of a batch is one look at the machine, not one per tree.
 */
export function scanForTrees(leaders: ReadonlySet<number>, extraRoots: readonly Member[] = []): Member[] {
  const children = new Map<number, number[]>();
  const all = new Map<number, Member>();
  const found: Member[] = [];
  for (const entry of readdirSafe("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const fields = statFields(`/proc/${pid}/stat`);
    if (!fields || fields[0] === "Z") continue;
    const member = { pid, startTime: fields[19]! };
    all.set(pid, member);
    const parent = Number(fields[1]);
    let siblings = children.get(parent);
    if (!siblings) children.set(parent, (siblings = []));
    siblings.push(pid);
    if (leaders.has(Number(fields[2])) || leaders.has(Number(fields[3]))) found.push(member);
  }
  const roots = [...leaders, ...extraRoots.filter((root) => all.get(root.pid)?.startTime === root.startTime).map((root) => root.pid)];
  const seen = new Set(found.map((member) => member.pid));
  for (const pending = [...roots]; pending.length > 0; ) {
    const pid = pending.pop()!;
    for (const child of children.get(pid) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      found.push(all.get(child)!);
      pending.push(child);
    }
  }
  return found;
}

/**
 * The terminal's foreground process group for a PTY child (tpgid, field 8 of
 * /proc/PID/stat): where Ctrl-C would go. Falls back to the child's own group.
 */
export function foregroundGroup(leaderPid: number): number {
  const tpgid = Number(statFields(`/proc/${leaderPid}/stat`)?.[5]);
  return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : leaderPid;
}
