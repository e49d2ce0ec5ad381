/**
 * The daemon's side of the spawner process (see spawner-main.ts): start it
 * while the daemon is still small, send it spawn requests, open the
 * daemon's ends of each child's pipes (a terminal child's master the daemon
 * opened itself, spawn-pty.ts), and route each child's exit back to whoever
 * asked.
 */
import { fork, spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SpawnError } from "../process/child.js";
import { withoutDaemonSettings } from "../process/env-policy.js";
import { resolveExecutable } from "../process/resolve-executable.js";
import { FIFO_DIRECTORY_PREFIX } from "../state/stale-leftovers.js";
import { openDaemonEnds, type DaemonEnds } from "./daemon-ends.js";
import { pidNamespaceLaunch, type HelperLaunch } from "./pid-namespace.js";
import { CGROUP_ROOT_ENV, FIFO_DIRECTORY_ENV, OWN_PROC_ENV, type DaemonMessage, type SpawnRequest, type SpawnerMessage } from "./protocol.js";

const MAIN = fileURLToPath(new URL("./spawner-main.js", import.meta.url));
/** A small heap is the point: forks from the helper stay cheap. */
const HELPER_NODE_FLAGS = ["--max-old-space-size=64"];

export interface SpawnedChild extends DaemonEnds {
  readonly pid: number;
}

/** A child as the helper handed it over: its pipes' daemon ends, none for a terminal child. */
interface Started {
  readonly pid: number;
  readonly ends: DaemonEnds | undefined;
}

interface Pending {
  readonly id: number;
  /** Bytes of argv and environment this start holds in the helper until it answers. */
  readonly bytes: number;
  /** Counted against the helper's in-flight bounds until it answers (or dies). */
  admitted: boolean;
  resolve(child: Started): void;
  reject(error: Error): void;
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
  /** "failed" covers timed out: later news of it only matters for killing the child. */
  state: "starting" | "started" | "failed";
  pid?: number;
  /** Once started: the daemon's ends of its pipes. */
  child?: Started;
}

const SPAWN_TIMEOUT_MS = 10_000;

/**
 * What the helper may be working on at once. Each start's argv and
 * environment exist several times in its heap (the IPC message, the parsed
 * request, Node's spawn arguments), so 96 starts of 1 MiB each at once
 * exhausted its 64 MiB: past these bounds starts wait in the daemon, in
 * order, and a start alone is always let through.
 */
const MAX_STARTS_IN_FLIGHT = 64;
const MAX_BYTES_IN_FLIGHT = 8 * 1024 * 1024;
/** How long a readiness answer is trusted before /readyz spawns a test child again. */
const READY_FRESH_MS = 5_000;
/** How often children of a helper that died are looked for, until they exit. */
const ORPHAN_POLL_MS = 250;

function requestBytes(params: SpawnParams): number {
  let bytes = params.file.length + params.cwd.length;
  for (const arg of params.args) bytes += arg.length + 1;
  for (const [name, value] of Object.entries(params.env)) bytes += name.length + value.length + 2;
  return bytes;
}

/** Start time of a live (not zombie) process, from /proc; undefined once it is gone. */
function liveStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

function killTree(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // gone
    }
  }
}

export type SpawnParams = Omit<SpawnRequest, "type" | "id" | "terminal">;

export class Spawner {
  private process: ChildProcess;
  /**
   * Where the helper makes its FIFOs: private to this daemon, removed when it
   * stops. Sandboxes hide it: a process that held a spare FIFO open could
   * read another process's output or type into its stdin. Named with this
   * process's pid, so the next daemon removes it if every execmux process
   * was SIGKILLed (state/stale-leftovers.ts).
   */
  readonly fifoDirectory = mkdtempSync(join(tmpdir(), `${FIFO_DIRECTORY_PREFIX}${process.pid}-`));
  private nextId = 1;
  private readonly children = new Map<number, Pending>();
  private stopped = false;
  /** When a test child last ran through the helper, and whether it did. */
  private lastProbe: { at: number; ok: boolean } | undefined;
  private probing: Promise<boolean> | undefined;
  /** Starts waiting for room in the helper (MAX_STARTS_IN_FLIGHT, MAX_BYTES_IN_FLIGHT). */
  private readonly waiting: { pending: Pending; request: SpawnRequest; admitted: () => void }[] = [];
  private startsInFlight = 0;
  private bytesInFlight = 0;
  /** Children of a helper that died, still running: watched until they exit. */
  private readonly orphans = new Map<number, { pending: Pending; startTime: string }>();
  private orphanTimer: NodeJS.Timeout | undefined;

  /**
   * `onHelperExit` hears of every unplanned exit of the helper (it is
   * restarted); `onHandoverTimeout` of every start that timed out, with what
   * had arrived of it by then. `cgroupRoot` is the daemon's cgroup directory
   * (process-trees.ts), which the helper kills whole if the daemon dies.
   */
  constructor(
    private readonly onHelperExit: (code: number | null, signal: NodeJS.Signals | null) => void = () => undefined,
    private readonly onHandoverTimeout: (details: Record<string, number | boolean>) => void = () => undefined,
    private readonly cgroupRoot: string | undefined = undefined,
    /** --spawner-pid-namespace: "auto" uses it where the machine allows it, "on" throws where it does not. */
    pidNamespace: "auto" | "on" | "off" = "off",
  ) {
    this.namespaceLaunch = pidNamespace === "off" ? undefined : pidNamespaceLaunch();
    if (pidNamespace === "on" && !this.namespaceLaunch) {
      throw new Error("--spawner-pid-namespace on: no PID namespace with its own /proc here (`unshare --pid --fork --mount-proc true` fails: it needs util-linux, perl, mount, and root)");
    }
    this.process = this.startHelper();
  }

  /**
   * Whether the helper runs in a PID namespace of its own (pid-namespace.ts):
   * then nothing it started survives even when the daemon and the helper
   * are SIGKILLed at once.
   */
  get inPidNamespace(): boolean {
    return this.namespaceLaunch !== undefined;
  }

  /** How the helper is started in its namespace, when it is. */
  private readonly namespaceLaunch: HelperLaunch | undefined;

  /** The last readiness answer: the helper is there and its last test child ran. */
  get ready(): boolean {
    return this.process.connected && this.lastProbe?.ok === true;
  }

  /**
   * Readiness as it is now: a test child is spawned through the helper
   * unless one ran within READY_FRESH_MS (concurrent callers share it), so
   * a helper that cannot make FIFOs any more, or cannot fork, is not ready.
   */
  checkReady(): Promise<boolean> {
    if (!this.process.connected) return Promise.resolve(false);
    if (this.lastProbe && Date.now() - this.lastProbe.at < READY_FRESH_MS) return Promise.resolve(this.lastProbe.ok);
    return (this.probing ??= this.selfTest().finally(() => (this.probing = undefined)));
  }

  /** Resolves once ready; rejects if no test child has run within `timeoutMs`. */
  async whenReady(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.checkReady())) {
      if (Date.now() > deadline) throw new Error("the spawner process could not run a test child (are `true` and `mkfifo` installed, and is the temporary directory writable?)");
      await new Promise((resolve) => setTimeout(resolve, 5));
      this.lastProbe = undefined;
    }
  }

  /** Spawns `true` through the helper: proves the daemon can run processes at all. */
  private async selfTest(): Promise<boolean> {
    let ok = false;
    try {
      const file = resolveExecutable("true", "/", process.env.PATH);
      ok = await new Promise<boolean>((resolve, reject) => {
        this.spawn({ file, args: [], argv0: "true", cwd: "/", env: {}, pipeStdin: false, cgroup: undefined }, (code) => resolve(code === 0)).then(
          (child) => {
            child.stdout.resume();
            child.stderr.resume();
          },
          reject,
        );
      });
    } catch {
      ok = false;
    }
    this.lastProbe = { at: Date.now(), ok };
    return ok;
  }

  /** Spawns a child on pipes; `onExit` is called once when it has been reaped. */
  async spawn(params: SpawnParams, onExit: (code: number | null, signal: NodeJS.Signals | null) => void): Promise<SpawnedChild> {
    const { pid, ends } = await this.start({ ...params, terminal: undefined }, onExit);
    return { pid, ...ends! };
  }

  /**
   * Spawns a child whose stdio is the PTY slave at `terminal` (the caller
   * holds the master) and resolves with its pid; `onExit` as for spawn.
   */
  async spawnOnTerminal(
    params: Omit<SpawnParams, "pipeStdin">,
    terminal: string,
    onExit: (code: number | null, signal: NodeJS.Signals | null) => void,
  ): Promise<number> {
    return (await this.start({ ...params, pipeStdin: false, terminal }, onExit)).pid;
  }

  private start(params: Omit<SpawnRequest, "type" | "id">, onExit: (code: number | null, signal: NodeJS.Signals | null) => void): Promise<Started> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const pending: Pending = {
        id,
        bytes: requestBytes(params),
        admitted: false,
        resolve: (child) => {
          clearTimeout(timer);
          resolve(child);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
        onExit,
        state: "starting",
      };
      this.children.set(id, pending);
      // A start must never hang: past the deadline (counted from when the
      // helper got it) it fails, and a child that did start is killed
      // rather than left unreachable.
      const admitted = () => {
        timer = setTimeout(() => {
          if (pending.state !== "starting") return;
          this.onHandoverTimeout({
            startsInFlight: [...this.children.values()].filter((other) => other.state === "starting").length,
          });
          this.fail(pending, new SpawnError(`the spawner did not hand the child over within ${SPAWN_TIMEOUT_MS} ms`, "ETIMEDOUT"));
        }, SPAWN_TIMEOUT_MS);
        timer.unref();
      };
      this.waiting.push({ pending, request: { type: "spawn", id, ...params }, admitted });
      this.admitWaiting();
    });
  }

  /** Sends waiting starts to the helper while it has room for them. */
  private admitWaiting(): void {
    while (this.waiting.length > 0) {
      const { pending, request, admitted } = this.waiting[0]!;
      const room =
        this.startsInFlight === 0 ||
        (this.startsInFlight < MAX_STARTS_IN_FLIGHT && this.bytesInFlight + pending.bytes <= MAX_BYTES_IN_FLIGHT);
      if (!room) return;
      this.waiting.shift();
      if (pending.state !== "starting") continue;
      pending.admitted = true;
      this.startsInFlight++;
      this.bytesInFlight += pending.bytes;
      admitted();
      this.sendRequest(pending, request);
    }
  }

  /** The helper answered this start (or died): its room is free for the next. */
  private settle(pending: Pending): void {
    if (!pending.admitted) return;
    pending.admitted = false;
    this.startsInFlight--;
    this.bytesInFlight -= pending.bytes;
    this.admitWaiting();
  }

  /** A helper that has just died cannot take the request; the start fails rather than the daemon. */
  private sendRequest(pending: Pending, request: SpawnRequest): void {
    const fail = () => {
      if (pending.state !== "starting") return;
      this.children.delete(pending.id);
      this.settle(pending);
      this.fail(pending, new SpawnError("the spawner process is restarting; try again", "ESPAWNER"));
    };
    if (!this.process.connected) return fail();
    this.process.send(request satisfies DaemonMessage, (error) => {
      if (error) fail();
    });
  }

  /** The start fails, and the child is killed if it is known. */
  private fail(pending: Pending, error: SpawnError): void {
    pending.state = "failed";
    if (pending.pid !== undefined) killTree(pending.pid);
    pending.reject(error);
  }

  /** Stops the helper (its children are the daemon's to kill first). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.orphanTimer);
    this.process.disconnect();
    rmSync(this.fifoDirectory, { recursive: true, force: true });
  }

  private startHelper(): ChildProcess {
    // It needs none of the daemon's settings (its token among them).
    const env = withoutDaemonSettings(process.env);
    env[FIFO_DIRECTORY_ENV] = this.fifoDirectory;
    if (this.cgroupRoot) env[CGROUP_ROOT_ENV] = this.cgroupRoot;
    if (this.namespaceLaunch) env[OWN_PROC_ENV] = "1";
    const options = {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      env,
      // Its own process group: a Ctrl-C or a supervisor's signal to the
      // daemon's group must reach the daemon, which then terminates children
      // gracefully through this helper, not kill the helper underneath it.
      detached: true,
    } satisfies SpawnOptions;
    const launch = this.namespaceLaunch;
    const helper = launch
      ? spawn(launch.file, [...launch.args, process.execPath, ...HELPER_NODE_FLAGS, MAIN], options)
      : fork(MAIN, [], { ...options, execArgv: HELPER_NODE_FLAGS });
    helper.on("message", (message: SpawnerMessage) => this.onMessage(message));
    // EPIPE when a request races the helper's death: "exit" follows and restarts it.
    helper.on("error", () => undefined);
    let gone = false;
    const onGone = (code: number | null, signal: NodeJS.Signals | null) => {
      if (gone) return;
      gone = true;
      if (!this.stopped) this.onHelperExit(code, signal);
      this.onHelperGone();
    };
    // In a namespace the process started here is the outer perl, which
    // lives on while the namespace's init keeps a dead helper's orphans:
    // the helper's own end is the channel's.
    if (launch) helper.on("disconnect", () => onGone(null, null));
    else helper.on("exit", onGone);
    this.lastProbe = undefined;
    return helper;
  }

  private onMessage(message: SpawnerMessage): void {
    const pending = this.children.get(message.id);
    if (!pending) return;
    switch (message.type) {
      case "failed":
        this.children.delete(message.id);
        this.settle(pending);
        if (pending.state === "starting") this.fail(pending, new SpawnError(message.message, message.code));
        return;
      case "spawned": {
        this.settle(pending);
        pending.pid = message.pid;
        // The start already failed (timed out): nobody can reach this child.
        // A child on a terminal has no FIFO ends held in the helper: nothing to release.
        const release = () => message.pipes && this.tell({ type: "release", id: message.id });
        if (pending.state === "failed") {
          killTree(message.pid);
          return release();
        }
        let child: Started;
        try {
          child = { pid: message.pid, ends: message.pipes && openDaemonEnds(message.pipes) };
        } catch (error) {
          this.fail(pending, new SpawnError(`cannot open the child's pipes: ${(error as Error).message}`, "EPIPES"));
          return;
        } finally {
          release();
        }
        pending.state = "started";
        pending.child = child;
        return pending.resolve(child);
      }
      case "exit":
        // It may come in the same read as "spawned", before whoever awaited
        // the start has attached to the child: ManagedProcess allows for that.
        this.children.delete(message.id);
        // As Node does for its children: nobody may read that pipe any more
        // (and a FIFO's writer would only learn of it on its next write).
        pending.child?.ends?.stdin?.destroy();
        if (pending.state === "started") pending.onExit(message.code, message.signal);
        return;
    }
  }

  private tell(message: DaemonMessage): void {
    if (this.process.connected) this.process.send(message, () => undefined);
  }

  /**
   * The helper died (killed from outside, out of memory). Starts it was
   * working on fail (a child of one is killed: nobody could reach it).
   * Children it had handed over keep running: their pipes are the daemon's,
   * and only their exit status is lost (the kernel gave them to another
   * parent), so they are watched until they exit and reported with upstream's
   * exit code for "unknown", -1. A new helper takes over.
   */
  private onHelperGone(): void {
    const children = [...this.children.values()];
    this.children.clear();
    this.startsInFlight = 0;
    this.bytesInFlight = 0;
    for (const pending of children) {
      pending.admitted = false;
      if (pending.state === "starting") {
        this.fail(pending, new SpawnError("the spawner process exited", "ESPAWNER"));
      } else if (pending.state === "started" && pending.pid !== undefined) {
        this.adopt(pending, pending.pid);
      } else if (pending.pid !== undefined) {
        killTree(pending.pid);
      }
    }
    if (!this.stopped) {
      this.process = this.startHelper();
      this.admitWaiting();
    }
  }

  private adopt(pending: Pending, pid: number): void {
    const startTime = liveStartTime(pid);
    if (startTime === undefined) return this.orphanExited(pending);
    this.orphans.set(pid, { pending, startTime });
    this.orphanTimer ??= setInterval(() => this.pollOrphans(), ORPHAN_POLL_MS).unref();
  }

  private pollOrphans(): void {
    for (const [pid, orphan] of this.orphans) {
      if (liveStartTime(pid) === orphan.startTime) continue;
      this.orphans.delete(pid);
      this.orphanExited(orphan.pending);
    }
    if (this.orphans.size === 0) {
      clearInterval(this.orphanTimer);
      this.orphanTimer = undefined;
    }
  }

  private orphanExited(pending: Pending): void {
    pending.child?.ends?.stdin?.destroy();
    pending.onExit(-1, null);
  }
}
