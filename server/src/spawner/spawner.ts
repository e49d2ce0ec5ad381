/**
 * The daemon's side of the spawner process (see spawner-main.ts): start it
 * while the daemon is still small, send it spawn requests, open the
 * daemon's ends of each child's pipes, and route each child's exit back to
 * whoever asked.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SpawnError } from "../process/child.js";
import { resolveExecutable } from "../process/resolve-executable.js";
import { openDaemonEnds, type DaemonEnds } from "./daemon-ends.js";
import { FIFO_DIRECTORY_ENV, type DaemonMessage, type SpawnRequest, type SpawnerMessage } from "./protocol.js";

const MAIN = fileURLToPath(new URL("./spawner-main.js", import.meta.url));

export interface SpawnedChild extends DaemonEnds {
  readonly pid: number;
}

interface Pending {
  readonly id: number;
  resolve(child: SpawnedChild): void;
  reject(error: Error): void;
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
  /** "failed" covers timed out: later news of it only matters for killing the child. */
  state: "starting" | "started" | "failed";
  pid?: number;
  /** Once started: the daemon's ends of its pipes. */
  child?: SpawnedChild;
}

const SPAWN_TIMEOUT_MS = 10_000;

function killTree(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // gone
    }
  }
}

export type SpawnParams = Omit<SpawnRequest, "type" | "id">;

export class Spawner {
  private process: ChildProcess;
  /**
   * Where the helper makes its FIFOs: private to this daemon, removed when it
   * stops. Sandboxes hide it: a process that held a spare FIFO open could
   * read another process's output or type into its stdin.
   */
  readonly fifoDirectory = mkdtempSync(join(tmpdir(), "execmux-fifos-"));
  private nextId = 1;
  private readonly children = new Map<number, Pending>();
  private stopped = false;
  private selfTested = false;

  /**
   * `onHelperExit` hears of every unplanned exit of the helper (it is
   * restarted); `onHandoverTimeout` of every start that timed out, with what
   * had arrived of it by then.
   */
  constructor(
    private readonly onHelperExit: (code: number | null, signal: NodeJS.Signals | null) => void = () => undefined,
    private readonly onHandoverTimeout: (details: Record<string, number | boolean>) => void = () => undefined,
  ) {
    this.process = this.startHelper();
  }

  /** True once the helper has run a test child successfully (readiness). */
  get ready(): boolean {
    return this.selfTested && this.process.connected;
  }

  /** Resolves once ready; rejects if the test child has not run within `timeoutMs`. */
  async whenReady(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ready) {
      if (Date.now() > deadline) throw new Error("the spawner process could not run a test child (are `true` and `mkfifo` installed, and is the temporary directory writable?)");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Spawns `true` through the helper: proves the daemon can run processes at all. */
  private selfTest(): void {
    let file: string;
    try {
      file = resolveExecutable("true", "/", process.env.PATH);
    } catch {
      return;
    }
    this.spawn({ file, args: [], argv0: "true", cwd: "/", env: {}, pipeStdin: false }, (code) => {
      this.selfTested = code === 0;
    }).then(
      (child) => {
        child.stdout.resume();
        child.stderr.resume();
      },
      () => undefined,
    );
  }

  /** Spawns a child; `onExit` is called once when it has been reaped. */
  spawn(params: SpawnParams, onExit: (code: number | null, signal: NodeJS.Signals | null) => void): Promise<SpawnedChild> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // A start must never hang: past the deadline it fails, and a child
      // that did start is killed rather than left unreachable.
      const timer = setTimeout(() => {
        if (pending.state !== "starting") return;
        this.onHandoverTimeout({
          startsInFlight: [...this.children.values()].filter((other) => other.state === "starting").length,
        });
        this.fail(pending, new SpawnError(`the spawner did not hand the child over within ${SPAWN_TIMEOUT_MS} ms`, "ETIMEDOUT"));
      }, SPAWN_TIMEOUT_MS);
      timer.unref();
      const pending: Pending = {
        id,
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
      this.sendRequest(pending, { type: "spawn", id, ...params });
    });
  }

  /** A helper that has just died cannot take the request; the start fails rather than the daemon. */
  private sendRequest(pending: Pending, request: SpawnRequest): void {
    const fail = () => {
      if (pending.state !== "starting") return;
      this.children.delete(pending.id);
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
    this.process.disconnect();
    rmSync(this.fifoDirectory, { recursive: true, force: true });
  }

  private startHelper(): ChildProcess {
    // A small heap is the point: forks from this process stay cheap.
    // Nor does it need the daemon's settings (its token among them).
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toUpperCase().startsWith("EXECMUX_")));
    env[FIFO_DIRECTORY_ENV] = this.fifoDirectory;
    const helper = fork(MAIN, [], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      execArgv: ["--max-old-space-size=64"],
      env,
      // Its own process group: a Ctrl-C or a supervisor's signal to the
      // daemon's group must reach the daemon, which then terminates children
      // gracefully through this helper, not kill the helper underneath it.
      detached: true,
    });
    helper.on("message", (message: SpawnerMessage) => this.onMessage(message));
    // EPIPE when a request races the helper's death: "exit" follows and restarts it.
    helper.on("error", () => undefined);
    helper.on("exit", (code, signal) => {
      if (!this.stopped) this.onHelperExit(code, signal);
      this.onHelperGone();
    });
    this.selfTested = false;
    // After `this.process` is assigned by the caller.
    queueMicrotask(() => this.selfTest());
    return helper;
  }

  private onMessage(message: SpawnerMessage): void {
    const pending = this.children.get(message.id);
    if (!pending) return;
    switch (message.type) {
      case "failed":
        this.children.delete(message.id);
        if (pending.state === "starting") this.fail(pending, new SpawnError(message.message, message.code));
        return;
      case "spawned": {
        pending.pid = message.pid;
        // The start already failed (timed out): nobody can reach this child.
        if (pending.state === "failed") {
          killTree(message.pid);
          return this.tell({ type: "release", id: message.id });
        }
        let child: SpawnedChild;
        try {
          child = { pid: message.pid, ...openDaemonEnds(message.pipes) };
        } catch (error) {
          this.fail(pending, new SpawnError(`cannot open the child's pipes: ${(error as Error).message}`, "EPIPES"));
          return;
        } finally {
          this.tell({ type: "release", id: message.id });
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
        pending.child?.stdin?.destroy();
        if (pending.state === "started") pending.onExit(message.code, message.signal);
        return;
    }
  }

  private tell(message: DaemonMessage): void {
    if (this.process.connected) this.process.send(message, () => undefined);
  }

  /**
   * The helper died (killed from outside, out of memory): its children can no
   * longer be reaped or reported, so they are killed and reported as killed,
   * and a new helper takes over.
   */
  private onHelperGone(): void {
    const orphans = [...this.children.values()];
    this.children.clear();
    for (const pending of orphans) {
      if (pending.state === "starting") this.fail(pending, new SpawnError("the spawner process exited", "ESPAWNER"));
      else if (pending.pid !== undefined) killTree(pending.pid);
      if (pending.state === "started") pending.onExit(null, "SIGKILL");
    }
    if (!this.stopped) this.process = this.startHelper();
  }
}
