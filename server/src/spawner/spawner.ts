/**
 * The daemon's side of the spawner process (see spawner-main.ts): start it
 * while the daemon is still small, send it spawn requests, and route each
 * child's stdio handles and exit back to whoever asked.
 */
import { fork, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { SpawnError } from "../process/child.js";
import { resolveExecutable } from "../process/resolve-executable.js";
import type { SpawnRequest, SpawnerMessage } from "./protocol.js";

const MAIN = fileURLToPath(new URL("./spawner-main.js", import.meta.url));

export interface SpawnedChild {
  readonly pid: number;
  readonly stdin: Socket | undefined;
  readonly stdout: Socket | undefined;
  readonly stderr: Socket | undefined;
}

interface Pending {
  resolve(child: SpawnedChild): void;
  reject(error: Error): void;
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
  pid?: number;
  stdio: (Socket | undefined)[];
  awaitedStdio: number;
  /** Resolved, rejected or timed out: later messages about it only matter for its exit. */
  settled: boolean;
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
      if (Date.now() > deadline) throw new Error("the spawner process could not run a test child (is `true` on PATH?)");
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
        child.stdout?.resume();
        child.stderr?.resume();
      },
      () => undefined,
    );
  }

  /** Spawns a child; `onExit` is called once when it has been reaped. */
  spawn(params: SpawnParams, onExit: (code: number | null, signal: NodeJS.Signals | null) => void): Promise<SpawnedChild> {
    const id = this.nextId++;
    const request: SpawnRequest = { type: "spawn", id, ...params };
    return new Promise((resolve, reject) => {
      const awaitedStdio = params.pipeStdin ? 3 : 2;
      // A start must never hang: past the deadline it fails, and a child
      // that did start is killed rather than left unreachable.
      const timer = setTimeout(() => {
        const pending = this.children.get(id);
        if (!pending || pending.settled) return;
        pending.settled = true;
        if (pending.pid !== undefined) killTree(pending.pid);
        for (const socket of pending.stdio) socket?.destroy();
        this.onHandoverTimeout({
          spawned: pending.pid !== undefined,
          handlesReceived: pending.stdio.filter(Boolean).length,
          handlesExpected: pending.awaitedStdio,
          startsInFlight: [...this.children.values()].filter((other) => !other.settled).length,
        });
        reject(new SpawnError(`the spawner did not hand the child over within ${SPAWN_TIMEOUT_MS} ms`, "ETIMEDOUT"));
      }, SPAWN_TIMEOUT_MS);
      timer.unref();
      this.children.set(id, {
        resolve: (child) => {
          clearTimeout(timer);
          resolve(child);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
        onExit,
        stdio: [],
        awaitedStdio,
        settled: false,
      });
      this.sendRequest(id, request);
    });
  }

  /** A helper that has just died cannot take the request; the start fails rather than the daemon. */
  private sendRequest(id: number, request: SpawnRequest): void {
    const fail = () => {
      const pending = this.children.get(id);
      if (!pending || pending.settled) return;
      this.children.delete(id);
      pending.settled = true;
      pending.reject(new SpawnError("the spawner process is restarting; try again", "ESPAWNER"));
    };
    if (!this.process.connected) return fail();
    this.process.send(request, (error) => {
      if (error) fail();
    });
  }

  /** Stops the helper (its children are the daemon's to kill first). */
  stop(): void {
    this.stopped = true;
    this.process.disconnect();
  }

  private startHelper(): ChildProcess {
    // A small heap is the point: forks from this process stay cheap.
    // Nor does it need the daemon's settings (its token among them).
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toUpperCase().startsWith("EXECMUX_")));
    const helper = fork(MAIN, [], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      execArgv: ["--max-old-space-size=64"],
      env,
      // Its own process group: a Ctrl-C or a supervisor's signal to the
      // daemon's group must reach the daemon, which then terminates children
      // gracefully through this helper, not kill the helper underneath it.
      detached: true,
    });
    helper.on("message", (message: SpawnerMessage, handle?: Socket) => this.onMessage(message, handle));
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

  private onMessage(message: SpawnerMessage, handle: Socket | undefined): void {
    const pending = this.children.get(message.id);
    if (!pending) return;
    switch (message.type) {
      case "failed":
        this.children.delete(message.id);
        if (!pending.settled) pending.reject(new SpawnError(message.message, message.code));
        pending.settled = true;
        return;
      case "spawned":
        pending.pid = message.pid;
        // The start already failed (timed out): nobody can reach this child.
        if (pending.settled) killTree(message.pid);
        break;
      case "stdio":
        pending.stdio[message.fd] = handle;
        break;
      case "exit":
        this.children.delete(message.id);
        pending.onExit(message.code, message.signal);
        return;
    }
    if (pending.settled) {
      handle?.destroy(); // arrived after the start had failed
      return;
    }
    const received = pending.stdio.filter(Boolean).length;
    if (pending.pid !== undefined && received === pending.awaitedStdio) {
      pending.settled = true;
      pending.resolve({ pid: pending.pid, stdin: pending.stdio[0], stdout: pending.stdio[1], stderr: pending.stdio[2] });
    }
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
      if (pending.pid === undefined || !pending.settled) {
        if (!pending.settled) pending.reject(new SpawnError("the spawner process exited", "ESPAWNER"));
        if (pending.pid !== undefined) killTree(pending.pid);
        continue;
      }
      killTree(pending.pid);
      pending.onExit(null, "SIGKILL");
    }
    if (!this.stopped) this.process = this.startHelper();
  }
}
