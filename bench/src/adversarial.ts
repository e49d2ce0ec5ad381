/**
 * Section 8: what each attack from issues #22 and #34 costs everyone else.
 * For each one, against a daemon with tokens: the daemon's worst
 * event-loop delay while it ran (nodejs_eventloop_lag_max_seconds, reset
 * just before), the longest and the 99th percentile of the echoes of a
 * bystander (another client: a token of its own)
 * through `cat` meanwhile (target: p99 under 10 ms; a short attack is run
 * again until there are a hundred of them), and the daemon's peak RSS
 * growth. test/adversarial.test.ts checks that the daemon survives
 * them; this says how much they hurt.
 */
import { fork, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import type { DaemonProcess } from "./daemon-process.js";
import { percentile, sortNumbers } from "./stats.js";

const MiB = 1024 * 1024;
/** An attack that takes longer than this is reported as failed, not waited for. */
const ATTACK_TIMEOUT_MS = 60_000;

function withTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not finish in ${ATTACK_TIMEOUT_MS / 1000} s`)), ATTACK_TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export interface AttackResult {
  readonly attack: string;
  /** A row for comparison (Attack.context): no target. */
  readonly context?: boolean;
  /** Why the attack's measurement failed (it did not finish in ATTACK_TIMEOUT_MS, or the daemon died). */
  readonly failed?: string;
  readonly eventLoopMaxMs: number;
  readonly bystanderEchoMaxMs: number;
  readonly bystanderEchoP99Ms: number;
  /** Echo round trips the bystander made during the attack. */
  readonly bystanderEchoes: number;
  readonly rssGrowthMiB: number;
}

/** A raw protocol client that sends exactly what it is told (and can stop reading, like a stalled one). */
async function rawClient(url: string, token: string) {
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const waiters = new Map<number | string, (message: { result?: unknown; error?: unknown }) => void>();
  socket.on("message", (data, isBinary) => {
    // Parsed only when someone waits: a flood's thousands of replies are the attacker's cost, not to be the bystander's too.
    if (isBinary || waiters.size === 0) return;
    const message = JSON.parse(data.toString()) as { id?: number | string; result?: unknown; error?: unknown };
    if (message.id !== undefined) waiters.get(message.id)?.(message);
  });
  let nextId = 1;
  const request = (method: string, params: unknown) =>
    new Promise<{ result?: any; error?: unknown }>((resolve) => {
      const id = nextId++;
      waiters.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await request("initialize", { clientName: "bench-attacker" });
  socket.send(JSON.stringify({ method: "initialized" }));
  const tcp = (socket as unknown as { _socket: { pause(): void; write(data: Buffer): boolean } })._socket;
  return {
    socket,
    request,
    stopReading: () => tcp.pause(),
    close: () => socket.terminate(),
    /** `count` copies of the text frame `text` written to the TCP socket at once, as fast as an attacker can: no per-frame cost here. */
    blast: (text: string, count: number) => tcp.write(Buffer.concat(Array.from({ length: count }, () => maskedTextFrame(text)))),
  };
}

/** One client-to-server text frame (RFC 6455), masked with a zero key (so the payload is as it is). */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const length = payload.length;
  const head = length < 126 ? Buffer.from([0x81, 0x80 | length]) : length < 65536 ? Buffer.from([0x81, 0x80 | 126, length >> 8, length & 0xff]) : undefined;
  if (!head) throw new Error("frames over 64 KiB are not needed here");
  return Buffer.concat([head, Buffer.alloc(4), payload]);
}

/** The bystander process (bystander.ts): echoes through `cat` while an attack runs. */
class Bystander {
  private constructor(private readonly child: ChildProcess) {}

  static async start(url: string, token: string): Promise<Bystander> {
    const child = fork(fileURLToPath(new URL("./bystander.js", import.meta.url)), { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const bystander = new Bystander(child);
    await bystander.ask({ kind: "connect", url, token }, "ready");
    return bystander;
  }

  measure(): void {
    this.child.send({ kind: "measure" });
  }

  /** The echo times (ms) since measure(); one that never comes back (a dead daemon) counts as ATTACK_TIMEOUT_MS. */
  async stop(): Promise<number[]> {
    const answer = (this.ask({ kind: "stop" }, "echoes") as Promise<{ samples: number[] }>).then((message) => message.samples);
    const timeout = new Promise<number[]>((resolve) => setTimeout(() => resolve([ATTACK_TIMEOUT_MS]), ATTACK_TIMEOUT_MS).unref());
    return Promise.race([answer, timeout]);
  }

  exit(): void {
    this.child.send({ kind: "exit" });
  }

  private ask(command: unknown, answerKind: string): Promise<unknown> {
    return new Promise((resolve) => {
      const onMessage = (message: { kind: string }) => {
        if (message.kind !== answerKind) return;
        this.child.off("message", onMessage);
        resolve(message);
      };
      this.child.on("message", onMessage);
      this.child.send(command as object);
    });
  }
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const startParams = (processId: string, envPolicy: unknown, env: Record<string, string> = {}) => ({ processId, argv: ["true"], cwd: "/", env, envPolicy });

/** A local HTTP server answering every request with `bytes` of body; closed with `close()`. */
async function bodyServer(bytes: number): Promise<{ url: string; close: () => Promise<void> }> {
  const body = Buffer.alloc(bytes, 98);
  const server = createServer((_request, response) => {
    response.setHeader("content-length", body.length);
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** How every reply to a client that does not send `jsonrpc` begins (notifications begin with `{"method"`). */
const REPLY_START = Buffer.from('{"id":');

/** Resolves once `count` replies arrived on the socket (told by their first bytes: parsing each would cost this process more than the daemon). */
function repliesArrived(socket: WebSocket, count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const onMessage = (data: Buffer, isBinary: boolean) => {
      if (isBinary || !data.subarray(0, REPLY_START.length).equals(REPLY_START)) return;
      if (++seen < count) return;
      socket.off("message", onMessage);
      resolve();
    };
    socket.on("message", onMessage);
  });
}

/**
 * An attack: `prepare` sets up what it needs (not measured) and gives back
 * the attack itself, which resolves once the daemon has dealt with it.
 */
interface Attack {
  readonly name: string;
  readonly prepare: () => Promise<() => Promise<void>>;
  /** Measured for comparison with another row, with no target of its own. */
  readonly context?: boolean;
}

const plain = (name: string, run: () => Promise<void>): Attack => ({ name, prepare: async () => run });

function attacks(url: string, token: string): Attack[] {
  /** 4 sockets x 2,000 lists of 50 processes each (replies of 10 KB): at once, or `perTick` per socket every 100 ms. */
  const listFlood = (name: string, perTick?: number): Attack => ({
    name,
    // The 200 processes the lists list are started before the bystander measures: this is the lists' cost.
    prepare: async () => {
      const attackers = await Promise.all(Array.from({ length: 4 }, () => rawClient(url, token)));
      await Promise.all(
        attackers.flatMap((attacker, socket) =>
          Array.from({ length: 50 }, (_, index) => attacker.request("process/start", { processId: `l${socket}-${index}`, argv: ["sleep", "60"], cwd: "/", env: {} })),
        ),
      );
      const list = '{"id":"list","method":"process/list","params":{}}';
      return async () => {
        await Promise.all(
          attackers.map(async (attacker) => {
            const done = repliesArrived(attacker.socket, 2_000);
            if (perTick === undefined) attacker.blast(list, 2_000);
            else {
              for (let sent = 0; sent < 2_000; sent += perTick) {
                attacker.blast(list, perTick);
                await new Promise((resolve) => setTimeout(resolve, 100));
              }
            }
            await done;
          }),
        );
        for (const attacker of attackers) attacker.close();
      };
    },
  });
  return [
    plain(
      "400 x process/read of 1 MiB, replies never read",
      async () => {
        const attacker = await rawClient(url, token);
        await attacker.request("process/start", { processId: "big", argv: ["head", "-c", String(MiB), "/dev/zero"], cwd: "/", env: {} });
        let read = await attacker.request("process/read", { processId: "big", afterSeq: 0, waitMs: 10_000 });
        while (!read.result.closed) read = await attacker.request("process/read", { processId: "big", afterSeq: 0, waitMs: 10_000 });
        attacker.stopReading();
        for (let index = 0; index < 400; index++) attacker.socket.send(JSON.stringify({ id: 10_000 + index, method: "process/read", params: { processId: "big", afterSeq: 0 } }));
        await new Promise((resolve) => setTimeout(resolve, 2000));
        attacker.close();
      },
    ),
    plain(
      "212-byte and 256-byte backtracking includeOnly globs",
      async () => {
        const attacker = await rawClient(url, token);
        for (const stars of [106, 128]) await attacker.request("process/start", startParams(`g${stars}`, { inherit: "all", includeOnly: ["*a".repeat(stars)] }, { ["a".repeat(300) + "b"]: "1" }));
        attacker.close();
      },
    ),
    plain(
      "glob work up to the per-request budget (refused)",
      async () => {
        const attacker = await rawClient(url, token);
        const set = Object.fromEntries(Array.from({ length: 4000 }, (_, index) => [`${"A".repeat(1000)}${index}`, "v"]));
        await attacker.request("process/start", startParams("budget", { inherit: "none", set, includeOnly: Array.from({ length: 128 }, () => `*${"?".repeat(250)}b`) }));
        attacker.close();
      },
    ),
    plain(
      "15 MB exclude list, 100k env names, 200k cursors (refused)",
      async () => {
        const attacker = await rawClient(url, token);
        await attacker.request("process/start", startParams("x", { inherit: "all", exclude: Array.from({ length: 15_000 }, (_, index) => `P_${index}_*`.padEnd(1000, "x")) }));
        // Objects this wide are refused before parsing, as malformed (id -1).
        const refused = new Promise<void>((resolve) => {
          let count = 0;
          attacker.socket.on("message", (data) => {
            if ((JSON.parse(data.toString()) as { id?: unknown }).id === -1 && ++count === 2) resolve();
          });
        });
        attacker.socket.send(JSON.stringify({ id: "names", method: "process/start", params: startParams("y", null, Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`N${index}`, "v"]))) }));
        const cursors = Object.fromEntries(Array.from({ length: 200_000 }, (_, index) => [`p${index}`, 0]));
        attacker.socket.send(JSON.stringify({ id: "cursors", method: "initialize", params: { clientName: "x", resumeSessionId: "00000000-0000-0000-0000-000000000000", cursors } }));
        await refused;
        attacker.close();
      },
    ),
    plain(
      "frames nested 5,000 deep (jsonrpc, params, id)",
      async () => {
        const attacker = await rawClient(url, token);
        for (let index = 0; index < 100; index++) {
          attacker.socket.send(`{"jsonrpc":${nested(5000)},"id":1,"method":"environment/info"}`);
          attacker.socket.send(`{"id":2,"method":"process/start","params":${nested(5000)}}`);
        }
        await attacker.request("process/list", {});
        attacker.close();
      },
    ),
    plain(
      "100,000 malformed frames and 100,000 acks",
      async () => {
        const attacker = await rawClient(url, token);
        attacker.blast("x", 100_000);
        attacker.blast('{"method":"process/ack","params":{"processId":"none","bytes":1}}', 100_000);
        await attacker.request("process/list", {});
        attacker.close();
      },
    ),
    plain(
      "process/ack floods on 8 sockets (8 x 50,000)",
      async () => {
        const attackers = await Promise.all(Array.from({ length: 8 }, () => rawClient(url, token)));
        for (const attacker of attackers) attacker.blast('{"method":"process/ack","params":{"processId":"none","bytes":1}}', 50_000);
        await Promise.all(attackers.map((attacker) => attacker.request("process/list", {})));
        for (const attacker of attackers) attacker.close();
      },
    ),
    listFlood("process/list floods: 4 sockets x 2,000 lists of 50 processes each"),
    // Context for the row above: the same lists, replies capped as a reply-throughput budget would cap them.
    { ...listFlood("process/list floods, paced: 100 lists per socket every 100 ms (about 10 MB/s of replies each)", 100), context: true },
    plain(
      "fs/walk of /usr (up to 50,000 entries), 10 times on 2 sockets",
      async () => {
        const attackers = await Promise.all([0, 1].map(() => rawClient(url, token)));
        const options = { maxDepth: 64, maxDirectories: 10_000, maxEntries: 50_000, followDirectorySymlinks: false };
        await Promise.all(attackers.flatMap((attacker) => Array.from({ length: 5 }, () => attacker.request("fs/walk", { path: "file:///usr", options }))));
        for (const attacker of attackers) attacker.close();
      },
    ),
    plain(
      "12 MB initialize frames, one on each of 5 sockets",
      async () => {
        const padding = "x".repeat(12_000_000);
        for (let index = 0; index < 5; index++) {
          const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
          await new Promise((resolve, reject) => {
            socket.once("open", resolve);
            socket.once("error", reject);
          });
          const answered = repliesArrived(socket, 1);
          socket.send(`{"id":1,"method":"initialize","params":{"clientName":"${padding}"}}`);
          await answered;
          socket.terminate();
        }
      },
    ),
    plain(
      "buffered http/request bodies never read: 4 sockets x 32 x 16 MiB",
      async () => {
        const server = await bodyServer(16 * MiB - 1024);
        const attackers = await Promise.all(Array.from({ length: 4 }, () => rawClient(url, token)));
        for (const attacker of attackers) {
          attacker.stopReading();
          for (let index = 0; index < 32; index++) {
            attacker.socket.send(JSON.stringify({ id: `h${index}`, method: "http/request", params: { method: "GET", url: server.url, headers: [], requestId: `h${index}` } }));
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 10_000));
        for (const attacker of attackers) attacker.close();
        await server.close();
      },
    ),
    plain(
      "2,000 handshakes with a wrong token",
      async () => {
        for (let batch = 0; batch < 40; batch++) {
          await Promise.all(
            Array.from({ length: 50 }, () =>
              new Promise<void>((resolve) => {
                const socket = new WebSocket(url, { headers: { authorization: "Bearer wrong" } });
                socket.once("unexpected-response", () => {
                  socket.terminate();
                  resolve();
                });
                socket.once("error", () => resolve());
              }),
            ),
          );
        }
      },
    ),
    plain(
      "session churn past the per-client quota (300 sessions)",
      async () => {
        for (let batch = 0; batch < 10; batch++) {
          const clients = await Promise.all(Array.from({ length: 30 }, () => rawClient(url, token).catch(() => undefined)));
          for (const client of clients) client?.close();
        }
      },
    ),
  ];
}

/**
 * A p99 needs about a hundred echoes to mean one: an attack over before the
 * bystander made that many beside it is prepared and run again (each round
 * measured from its run's start), up to MAX_ROUNDS times.
 */
const MIN_ECHOES = 100;
const MAX_ROUNDS = 20;

/** Runs every attack, or those whose name contains `only` (`--attack TEXT`). */
export async function adversarial(daemon: DaemonProcess, tokens: { attacker: string; bystander: string }, only?: string): Promise<AttackResult[]> {
  const bystander = await Bystander.start(daemon.url, tokens.bystander);
  const token = tokens.attacker;
  const results: AttackResult[] = [];
  const lost = (attack: string, failed: string): AttackResult => ({ attack, failed, eventLoopMaxMs: NaN, bystanderEchoMaxMs: NaN, bystanderEchoP99Ms: NaN, bystanderEchoes: 0, rssGrowthMiB: NaN });
  for (const { name: attack, prepare, context } of attacks(daemon.url, token).filter(({ name }) => only === undefined || name.includes(only))) {
    console.error(`bench: 8. attack: ${attack}...`);
    const echoes: number[] = [];
    const rssBefore = daemon.rss();
    let peakRss = rssBefore;
    let eventLoopMaxMs = 0;
    let failed: string | undefined;
    for (let round = 0; round < MAX_ROUNDS && echoes.length < MIN_ECHOES && failed === undefined; round++) {
      const run = await withTimeout(prepare()).catch((error: unknown) => error as Error);
      if (run instanceof Error) {
        failed = `its preparation failed: ${run.message}`;
        break;
      }
      await daemon.metric("nodejs_eventloop_lag_max_seconds"); // a scrape resets the lag histogram
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, daemon.rss())), 50);
      bystander.measure();
      failed = await withTimeout(run()).then(
        () => undefined,
        (error: unknown) => (error as Error).message,
      );
      echoes.push(...(await bystander.stop()));
      clearInterval(sampler);
      peakRss = Math.max(peakRss, daemon.rss());
      if (daemon.child.exitCode !== null) break;
      eventLoopMaxMs = Math.max(eventLoopMaxMs, (await daemon.metric("nodejs_eventloop_lag_max_seconds")) * 1000);
    }
    if (daemon.child.exitCode !== null) {
      results.push(lost(attack, "the daemon died"));
      break;
    }
    const sorted = sortNumbers(echoes);
    results.push({
      attack,
      ...(context ? { context } : {}),
      ...(failed ? { failed } : {}),
      eventLoopMaxMs,
      bystanderEchoMaxMs: sorted.at(-1) ?? 0,
      bystanderEchoP99Ms: sorted.length > 0 ? percentile(sorted, 99) : 0,
      bystanderEchoes: sorted.length,
      rssGrowthMiB: (peakRss - rssBefore) / MiB,
    });
  }
  bystander.exit();
  return results;
}
