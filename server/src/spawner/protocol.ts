/**
 * How the daemon and its spawner process (spawner-main.ts) talk: requests,
 * reports and exits over Node's IPC channel; each child's stdio as a real
 * pipe (a FIFO, see fifo-pipe.ts) that both sides open by path, or a PTY
 * slave that the helper opens by path for the child.
 *
 * Not Node's own stdio pipes: those are socketpairs, and bash takes a socket
 * on stdin for a remote shell (rshd) and sources ~/.bashrc; upstream's
 * children get pipes. Not Node's handle passing either: it sends one handle
 * per message and holds every later message until the receiver acknowledges
 * it, so a burst of starts queued behind three round trips each.
 */

export interface SpawnRequest {
  readonly type: "spawn";
  readonly id: number;
  readonly file: string;
  readonly args: readonly string[];
  /** argv[0] as the program sees it. */
  readonly argv0: string | undefined;
  readonly cwd: string;
  readonly env: Record<string, string>;
  /** Whether stdin is a pipe (else /dev/null); stdout and stderr always are. Not for a terminal. */
  readonly pipeStdin: boolean;
  /**
   * A PTY slave's path (/dev/pts/N): the child's stdin, stdout and stderr
   * are that terminal instead of pipes (spawn-pty.ts). The daemon holds the
   * master; the child makes the terminal its controlling one itself.
   */
  readonly terminal: string | undefined;
  /** The cgroup the child is born into: the helper moves itself in for the fork. */
  readonly cgroup: string | undefined;
}

/** The FIFO paths of a child's pipes; the daemon opens its ends by these names. None for a terminal child. */
export interface ChildPipes {
  readonly stdin: string | undefined;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Daemon to helper. "release": the helper closes its copies of the daemon's
 * ends of a child's pipes (the daemon has opened its own, or wants none).
 */
export type DaemonMessage = SpawnRequest | { readonly type: "release"; readonly id: number };

/** Helper to daemon. */
export type SpawnerMessage =
  | { readonly type: "spawned"; readonly id: number; readonly pid: number; readonly pipes: ChildPipes | undefined }
  | { readonly type: "failed"; readonly id: number; readonly code: string; readonly message: string }
  | { readonly type: "exit"; readonly id: number; readonly code: number | null; readonly signal: NodeJS.Signals | null };

/** The helper's environment variable naming the daemon's private directory for FIFOs. */
export const FIFO_DIRECTORY_ENV = "EXECMUX_SPAWNER_FIFO_DIRECTORY";
/** The helper's environment variable naming the daemon's cgroup directory (process-trees.ts), if any. */
export const CGROUP_ROOT_ENV = "EXECMUX_SPAWNER_CGROUP_ROOT";
/** Set when the helper starts in a PID and mount namespace of its own (pid-namespace.ts): it mounts the namespace's /proc. */
export const OWN_PROC_ENV = "EXECMUX_SPAWNER_OWN_PROC";

/**
 * The helper's exit status when it leaves its children running (it was
 * signalled while the daemon lives). Status 0 means it killed them all (the
 * daemon is gone or stopped it): the PID namespace's init ends with it
 * (pid-namespace.ts).
 */
export const EXIT_LEAVING_CHILDREN = 3;
