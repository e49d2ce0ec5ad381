/**
 * A child's pid as the daemon sees it. Inside its own PID namespace
 * (pid-namespace.ts) the spawner learns its children's pids in that
 * namespace, but the daemon reports pids to clients and signals them from
 * outside. /proc is the outer one: /proc/self names this process by its
 * outer pid, its children list gives the outer pids of its children (a
 * zombie still among them until reaped), and each one's NSpid line ends
 * with its pid in here. The newest child is last in the list, so a start
 * costs two small reads, never a look at the machine; and it is race-free,
 * as a child stays this process's until this process reaps it, which
 * cannot happen before the start is reported (one thread runs JavaScript).
 */
import { readFileSync, readlinkSync } from "node:fs";

function ownOuterPid(): number {
  try {
    return Number(readlinkSync("/proc/self"));
  } catch {
    return process.pid; // no /proc: no namespace to translate from either
  }
}

const outerSelf = ownOuterPid();

/** Whether this process runs in a PID namespace below the one /proc shows. */
const inPidNamespace = outerSelf !== process.pid;

/** The outer pid of this process's child `pid` (a pid in this process's namespace). */
export function outerPidOf(pid: number): number {
  if (!inPidNamespace) return pid;
  // libuv forks on the main thread, whose tid is the process's pid.
  const children = readFileSync(`/proc/${outerSelf}/task/${outerSelf}/children`, "latin1").trim().split(" ");
  for (let index = children.length - 1; index >= 0; index--) {
    const candidate = children[index]!;
    try {
      const ids = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${candidate}/status`, "latin1"))?.[1]?.trim().split(/\s+/);
      if (ids && Number(ids[ids.length - 1]) === pid) return Number(candidate);
    } catch {
      // reaped meanwhile: not the one
    }
  }
  throw Object.assign(new Error(`cannot find the outer pid of child ${pid}`), { code: "ESRCH" });
}
