/**
 * A child's pid as the daemon sees it. Inside its own PID namespace
 * (pid-namespace.ts) the spawner learns its children's pids in that
 * namespace, but the daemon reports pids to clients and signals them from
 * outside. The outer /proc tells: /proc/self names this process by its
 * outer pid, its children list gives the outer pids of its children (a
 * zombie still among them until reaped), and each one's NSpid line ends
 * with its pid in here. The newest child is last in the list, so a start
 * costs two small reads, never a look at the machine; and it is race-free,
 * as a child stays this process's until this process reaps it, which
 * cannot happen before the start is reported (one thread runs JavaScript).
 *
 * In the namespace the children get a /proc of their own (mountOwnProc),
 * so that `ps`, `pgrep`, `kill` and a shell's `$$` in them agree on the
 * namespace's pids; this process keeps a descriptor of the outer one.
 */
import { execFileSync } from "node:child_process";
import { openSync, readFileSync, readlinkSync } from "node:fs";
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

/** The outer pid of this process's child `pid` (a pid in this process's namespace). */
export function outerPidOf(pid: number): number {
  if (!inPidNamespace) return pid;
  // libuv forks on the main thread, whose tid is the process's pid.
  const children = readFileSync(`${outerProc}/${outerSelf}/task/${outerSelf}/children`, "latin1").trim().split(" ");
  for (let index = children.length - 1; index >= 0; index--) {
    const candidate = children[index]!;
    try {
      const ids = /^NSpid:\s+(.*)$/m.exec(readFileSync(`${outerProc}/${candidate}/status`, "latin1"))?.[1]?.trim().split(/\s+/);
      if (ids && Number(ids[ids.length - 1]) === pid) return Number(candidate);
    } catch {
      // reaped meanwhile: not the one
    }
  }
  throw Object.assign(new Error(`cannot find the outer pid of child ${pid}`), { code: "ESRCH" });
}
