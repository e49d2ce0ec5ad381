/**
 * A child's pid as the daemon sees it. Inside its own PID namespace
 * (pid-namespace.ts) the spawner learns its children's pids in that
 * namespace, but the daemon reports pids to clients and signals them from
 * outside. The outer /proc tells: /proc/self names this process by its
 * outer pid, and its children list gives the outer pids of its children (a
 * zombie still among them until reaped), the newest last. So a start costs
 * one read of that list (a few pages with thousands of children), never a
 * look at the machine; and it is race-free, as a child stays this
 * process's until this process reaps it, which cannot happen before its
 * start is reported (one thread runs JavaScript).
 *
 * In the namespace the children get a /proc of their own (mountOwnProc),
 * so that `ps`, `pgrep`, `kill` and a shell's `$$` in them agree on the
 * namespace's pids; this process keeps a descriptor of the outer one.
 */
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readlinkSync, readSync } from "node:fs";
import { resolveExecutable } from "../process/resolve-executable.js";

/** Where the outer /proc is: /proc itself until mountOwnProc covers it. */
let outerProc = "/proc";

function ownOuterPid(): number {
  try {
    return Number(readlinkSync(`${outerProc}/self`));
  } catch {
    return process.pid; // no /proc: no namespace to translate from either
  }
}

const outerSelf = ownOuterPid();

/** Whether this process runs in a PID namespace below the one /proc shows. */
const inPidNamespace = outerSelf !== process.pid;

/**
 * Mounts a /proc of this PID namespace over /proc, in the mount namespace
 * the spawner was started in (`unshare --mount --propagation slave`: the
 * host's mounts still reach it, this one stays here). The outer /proc stays
 * reachable through a descriptor Node opened close-on-exec, so no child
 * inherits it. Throws if the mount fails; nothing is changed then.
 */
export function mountOwnProc(): void {
  if (!inPidNamespace) throw new Error("not in a PID namespace of its own");
  const outer = openSync("/proc", "r");
  try {
    execFileSync(resolveExecutable("mount", "/", process.env.PATH), ["-t", "proc", "-o", "nosuid,nodev,noexec", "proc", "/proc"], {
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 5_000,
    });
  } catch (error) {
    closeSync(outer);
    throw error;
  }
  outerProc = `/proc/self/fd/${outer}`;
}

/** This process's children list, kept open: a start then costs preads, not a path walk through /proc. */
let childrenList: { fd: number; buffer: Buffer } | undefined;

/**
 * "PID PID ... " (each followed by a space), read afresh from position 0.
 * A seq_file read returns at most one page however large the buffer (about
 * 500 pids), so it is read on to its end: a long list is several reads.
 */
function readChildrenList(): string {
  childrenList ??= { fd: openSync(`${outerProc}/${outerSelf}/task/${outerSelf}/children`, "r"), buffer: Buffer.allocUnsafe(16 * 1024) };
  let length = 0;
  for (;;) {
    if (length === childrenList.buffer.length) {
      const larger = Buffer.allocUnsafe(childrenList.buffer.length * 2); // thousands of children
      childrenList.buffer.copy(larger);
      childrenList.buffer = larger;
    }
    const { fd, buffer } = childrenList;
    const read = readSync(fd, buffer, length, buffer.length - length, length);
    if (read === 0) return buffer.toString("latin1", 0, length);
    length += read;
  }
}

/**
 * The outer pid of the child this process forked last, called right after
 * the fork (spawner-main.ts), before anything can reap it. The kernel
 * appends a new child to the end of its parent's children list, and nothing
 * but this thread forks here (libuv forks on the main thread, whose tid is
 * the process's pid), so the list's last entry is that child.
 */
export function outerPidOfNewestChild(): number | undefined {
  if (!inPidNamespace) return undefined;
  const text = readChildrenList();
  const newest = Number(text.slice(text.lastIndexOf(" ", text.length - 2) + 1));
  if (!Number.isInteger(newest) || newest <= 0) throw Object.assign(new Error("cannot find the outer pid of a child just forked"), { code: "ESRCH" });
  return newest;
}
