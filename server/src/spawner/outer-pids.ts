/**
 * A child's pid as the daemon sees it. Inside its own PID namespace
 * (pid-namespace.ts) the spawner learns its children's pids in that
 * namespace, but the daemon reports pids to clients and signals them from
 * outside. The outer /proc tells: /proc/self names this process by its
 * outer pid, and its children list gives the outer pids of its children (a
 * zombie still among them until reaped), the newest last. So a start costs
 * one small read, never a look at the machine; and it is race-free, as a
 * child stays this process's until this process reaps it, which cannot
 * happen before its start is reported (one thread runs JavaScript).
 *
 * In the namespace the children get a /proc of their own (mountOwnProc),
 * so that `ps`, `pgrep`, `kill` and a shell's `$$` in them agree on the
 * namespace's pids; this process keeps a descriptor of the outer one.
 */
import { execFileSync } from "node:child_process";
import { openSync, readlinkSync, readSync } from "node:fs";
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
  execFileSync(resolveExecutable("mount", "/", process.env.PATH), ["-t", "proc", "-o", "nosuid,nodev,noexec", "proc", "/proc"], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 5_000,
  });
  outerProc = `/proc/self/fd/${outer}`;
}

/** This process's children list, kept open: a start then costs one pread, not a path walk through /proc. */
let childrenList: { fd: number; buffer: Buffer } | undefined;

function readChildrenList(): string {
  childrenList ??= { fd: openSync(`${outerProc}/${outerSelf}/task/${outerSelf}/children`, "r"), buffer: Buffer.allocUnsafe(64 * 1024) };
  for (;;) {
    const { fd, buffer } = childrenList;
    // "PID PID ... " (each followed by a space); a seq_file read at position 0 lists them afresh.
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    if (length < buffer.length) return buffer.toString("latin1", 0, length);
    childrenList.buffer = Buffer.allocUnsafe(buffer.length * 2); // thousands of children: read it whole
  }
}

/**
 * The outer pid of the child this process forked last, called right after
 * the fork (spawner-main.ts), before anything can reap it. The kernel
 * appends a new child to the end of its parent's children list, and nothing
 * but this thread forks here (libuv forks on the main thread, whose tid is
 * the process's pid), so the list's last entry is that child: one read.
 */
export function outerPidOfNewestChild(): number | undefined {
  if (!inPidNamespace) return undefined;
  const text = readChildrenList();
  const newest = Number(text.slice(text.lastIndexOf(" ", text.length - 2) + 1));
  if (!Number.isInteger(newest) || newest <= 0) throw Object.assign(new Error("cannot find the outer pid of a child just forked"), { code: "ESRCH" });
  return newest;
}
