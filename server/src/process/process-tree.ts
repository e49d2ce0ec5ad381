/**
 * Killing everything a child started. Every child is spawned as the leader of
 * a new session and process group (setsid), so its pid names both. A signal
 * to the group reaches ordinary descendants; a scan of /proc for the session
 * also reaches those that moved to a group of their own (job control in an
 * interactive shell), which a group signal would miss.
 */
import { readdirSync, readFileSync } from "node:fs";

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

/** Pids (other than the daemon) whose session id is `sessionId`, from /proc. */
export function sessionMembers(sessionId: number): number[] {
  const members: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return members; // not Linux: the group signal is all we can do
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
      // Fields after the ")" that closes the command name: state ppid pgrp session ...
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[3]) === sessionId) members.push(pid);
    } catch {
      // exited while we looked
    }
  }
  return members;
}

/** Signals the whole tree: the group, then any session member outside it. */
export function signalTree(leaderPid: number, signal: NodeJS.Signals): void {
  signalGroup(leaderPid, signal);
  for (const pid of sessionMembers(leaderPid)) sendSignal(pid, signal);
}

/**
 * The terminal's foreground process group for a PTY child (tpgid, field 8 of
 * /proc/PID/stat): where Ctrl-C would go. Falls back to the child's own group.
 */
export function foregroundGroup(leaderPid: number): number {
  try {
    const stat = readFileSync(`/proc/${leaderPid}/stat`, "latin1");
    const tpgid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[5]);
    if (Number.isInteger(tpgid) && tpgid > 0) return tpgid;
  } catch {
    // gone, or not Linux
  }
  return leaderPid;
}
