/**
 * Section 10, resting cost: what one daemon costs a sandbox that mostly
 * idles, side by side with the pinned upstream `codex exec-server` in the
 * same run. Each server is started fresh; the time runs from its spawn
 * until the first process it starts (`/bin/true`) has closed, over a
 * WebSocket and over stdio, on a quiet machine and beside a CPU hog (one
 * busy loop per core). A few seconds after that first process, with no
 * client left, the whole process tree's RSS and PSS are summed, and then its
 * CPU time and wake-ups (context switches of every thread) over an idle
 * window.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
// @ts-expect-error: a plain .mjs script without types.
import { ensureUpstream } from "../../scripts/ensure-upstream.mjs";
import { DAEMON_NODE_FLAGS } from "./daemon-process.js";
import { freePort } from "./free-port.js";
import { NODE_FLOOR } from "./node-floor-server.js";

const CLI = fileURLToPath(new URL("../../server/dist/cli.js", import.meta.url));
/** How long after its first process closed the tree is measured at rest. */
const SETTLE_MS = 3_000;

export type ServerKind = "execmux" | "execmux in-process" | "upstream" | "bare Node";

export interface ColdStart {
  /** Spawn to the first process's `process/closed`. */
  readonly closedMs: number;
  /** Spawn to `initialize` answered. */
  readonly initializeMs: number;
}

export interface AtRest {
  readonly processes: number;
  readonly rssMiB: number;
  readonly pssMiB: number;
}

export interface Idle {
  readonly cpuMs: number;
  readonly wakeupsPerSecond: number;
}

interface Launched {
  readonly child: ChildProcess;
  /** Extra pids that belong to the server without descending from it (a persistent host, detached). */
  readonly marker: string;
  readonly home: string;
}

function launch(kind: ServerKind, transport: "ws" | "stdio", port: number): Launched {
  const home = mkdtempSync(join(tmpdir(), "execmux-rest-"));
  const listen = transport === "stdio" ? "stdio" : `ws://127.0.0.1:${transport === "ws" && kind === "upstream" ? 0 : port}`;
  const [file, args] =
    kind === "upstream"
      ? [ensureUpstream() as string, ["exec-server", "--listen", listen]]
      : kind === "bare Node"
        ? [process.execPath, [NODE_FLOOR, transport]]
        : [process.execPath, [...DAEMON_NODE_FLAGS, CLI, "serve", "--listen", listen, "--state-directory", join(home, "state"), "--log-level", "warn", ...(kind === "execmux in-process" ? ["--process-host", "in-process"] : [])]];
  // stderr a pipe of its own: a private process host inherits it, which is how treeOf finds that host.
  const child = spawn(file, args, { env: { ...process.env, HOME: home }, stdio: ["pipe", "pipe", "pipe"] });
  child.stderr!.resume();
  return { child, marker: home, home };
}

/**
 * Every pid below `root`, any whose command line names `marker` (a persistent
 * process host runs detached), and any that shares `root`'s stderr pipe (a
 * private host: it starts in a PID namespace of its own, whose init is not
 * the daemon's child).
 */
function treeOf(root: number, marker: string): number[] {
  const found = new Set<number>();
  const walk = (pid: number) => {
    if (found.has(pid)) return;
    found.add(pid);
    try {
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "latin1").trim().split(" ").filter(Boolean)) walk(Number(child));
      }
    } catch {
      // gone
    }
  };
  walk(root);
  const stderrOf = (pid: string | number) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/2`);
    } catch {
      return undefined;
    }
  };
  const rootStderr = stderrOf(root);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "latin1").includes(marker)) walk(Number(entry));
      else if (/^(pipe|socket):/.test(rootStderr ?? "") && stderrOf(entry) === rootStderr) walk(Number(entry));
    } catch {
      // gone
    }
  }
  return [...found];
}

function sumSmaps(pids: readonly number[]): AtRest {
  let rss = 0;
  let pss = 0;
  let processes = 0;
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "latin1");
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      processes++;
    } catch {
      // exited meanwhile
    }
  }
  return { processes, rssMiB: rss / 1024, pssMiB: pss / 1024 };
}

type ThreadUsage = Map<string, { cpuNs: number; switches: number }>;

/** CPU nanoseconds (schedstat: exact, where stat's ticks are 10 ms) and context switches of every thread, by thread. */
function usage(pids: readonly number[]): ThreadUsage {
  const threads: ThreadUsage = new Map();
  for (const pid of pids) {
    try {
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        const cpuNs = Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "latin1").split(" ")[0]);
        const status = readFileSync(`/proc/${pid}/task/${task}/status`, "latin1");
        const switches = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0) + Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
        threads.set(task, { cpuNs, switches });
      }
    } catch {
      // exited meanwhile
    }
  }
  return threads;
}

/**
 * What the threads did between two samples: a thread there at both counts
 * its difference, one born meanwhile all it did. (A thread that ended
 * meanwhile took what it did with it: summing the totals instead made an
 * idle server's CPU come out negative.)
 */
function usedBetween(before: ThreadUsage, after: ThreadUsage): { cpuNs: number; switches: number } {
  let cpuNs = 0;
  let switches = 0;
  for (const [task, now] of after) {
    const then = before.get(task) ?? { cpuNs: 0, switches: 0 };
    cpuNs += now.cpuNs - then.cpuNs;
    switches += now.switches - then.switches;
  }
  return { cpuNs, switches };
}

/** A JSON-RPC peer over a WebSocket or stdio lines. */
interface Peer {
  request(id: number, method: string, params: unknown): Promise<unknown>;
  notify(method: string, params: unknown): void;
  closed(processId: string): Promise<void>;
  end(): void;
}

function peerOver(send: (text: string) => void, end: () => void): { peer: Peer; receive: (text: string) => void } {
  const replies = new Map<number, (message: unknown) => void>();
  const closes = new Map<string, () => void>();
  const closedIds = new Set<string>();
  return {
    receive: (text) => {
      const message = JSON.parse(text) as { id?: number; method?: string; params?: { processId?: string } };
      if (message.id !== undefined) replies.get(message.id)?.(message);
      if (message.method === "process/closed" && message.params?.processId) {
        closedIds.add(message.params.processId);
        closes.get(message.params.processId)?.();
      }
    },
    peer: {
      request: (id, method, params) =>
        new Promise((resolve) => {
          replies.set(id, resolve);
          send(JSON.stringify({ id, method, params }));
        }),
      notify: (method, params) => send(JSON.stringify({ method, params })),
      closed: (processId) => (closedIds.has(processId) ? Promise.resolve() : new Promise((resolve) => closes.set(processId, resolve))),
      end,
    },
  };
}

async function connectPeer(launched: Launched, transport: "ws" | "stdio"): Promise<Peer> {
  if (transport === "stdio") {
    const { peer, receive } = peerOver(
      (text) => launched.child.stdin!.write(`${text}\n`),
      () => launched.child.stdin!.end(),
    );
    createInterface({ input: launched.child.stdout! }).on("line", (line) => line.trim() && receive(line));
    return peer;
  }
  const url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    launched.child.stdout!.on("data", (data: Buffer) => {
      seen += data.toString();
      const match = /wss?:\/\/\S+/.exec(seen);
      if (match) resolve(match[0]);
    });
    launched.child.once("exit", (code) => reject(new Error(`the server exited (${code}) before printing its URL`)));
  });
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const { peer, receive } = peerOver(
    (text) => socket.send(text),
    () => socket.close(),
  );
  socket.on("message", (data) => receive(data.toString()));
  return peer;
}

/** One busy loop per core, until stopped. */
export function cpuHog(): { stop(): void } {
  const hogs = cpus().map(() => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
  return { stop: () => hogs.forEach((hog) => hog.kill("SIGKILL")) };
}

/**
 * Starts a server, runs its first process, and measures it: the cold start,
 * then (when `rest` is asked) the tree at rest and `idleMs` of idling.
 */
export async function measureServer(
  kind: ServerKind,
  transport: "ws" | "stdio",
  options: { rest?: boolean; idleMs?: number } = {},
): Promise<{ cold: ColdStart; atRest?: AtRest; idle?: Idle }> {
  const port = await freePort();
  const started = performance.now();
  const launched = launch(kind, transport, port);
  try {
    const peer = await connectPeer(launched, transport);
    await peer.request(1, "initialize", { clientName: "resting-cost" });
    const initializeMs = performance.now() - started;
    peer.notify("initialized", {});
    await peer.request(2, "process/start", { processId: "first", argv: ["/bin/true"], cwd: "file:///tmp", env: {}, tty: false, pipeStdin: false, arg0: null });
    await peer.closed("first");
    const cold = { closedMs: performance.now() - started, initializeMs };
    if (!options.rest || transport === "stdio") {
      peer.end();
      return { cold };
    }
    peer.end();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const pids = treeOf(launched.child.pid!, launched.marker);
    const atRest = sumSmaps(pids);
    if (!options.idleMs) return { cold, atRest };
    const before = usage(pids);
    await new Promise((resolve) => setTimeout(resolve, options.idleMs));
    const used = usedBetween(before, usage(treeOf(launched.child.pid!, launched.marker)));
    const seconds = options.idleMs / 1000;
    return { cold, atRest, idle: { cpuMs: used.cpuNs / 1e6, wakeupsPerSecond: used.switches / seconds } };
  } finally {
    const pids = launched.child.pid ? treeOf(launched.child.pid, launched.marker) : [];
    launched.child.kill("SIGTERM");
    await new Promise((resolve) => (launched.child.exitCode !== null || launched.child.signalCode !== null ? resolve(undefined) : launched.child.once("exit", resolve)));
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    rmSync(launched.home, { recursive: true, force: true });
  }
}
