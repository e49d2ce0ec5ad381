/**
 * One case per class of attack from issue #22, each against a real daemon:
 * the daemon survives, its memory stays under a stated bound where memory
 * is what the attack goes for, and a bystander (a second client echoing
 * through `cat`) keeps being served. How long a bystander stalls under each
 * attack is a bench figure (`npm run bench -- --only 8`), never asserted here.
 */
import { writeFileSync } from "node:fs";
import { connect as tcpConnect } from "node:net";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { connect, ErrorCode } from "@execmux/client";
import { spawnDaemon, spawnTestDaemon, type RunningDaemon } from "./helpers/cli.js";
import { handshake, httpUrl, metric } from "./helpers/http.js";
import { daemonResidentBytes } from "./helpers/procfs.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

const MiB = 1024 * 1024;

type Bystander = Awaited<ReturnType<typeof startBystander>>;

/** A second client with `cat` running; `echoes()` resolves once a fresh line came back through it. */
async function startBystander(url: string, token?: string) {
  const client = await connect(url, { reconnect: false, ...(token ? { token } : {}) });
  const cat = await client.start({ argv: ["cat"], pipeStdin: true });
  let echoed = "";
  let wake: (() => void) | undefined;
  cat.onOutput((event) => {
    echoed += Buffer.from(event.data).toString();
    wake?.();
  });
  let round = 0;
  return {
    async echoes(): Promise<void> {
      const marker = `bystander-${++round}\n`;
      const back = new Promise<void>((resolve) => {
        wake = () => {
          if (echoed.includes(marker)) resolve();
        };
      });
      expect(await cat.write(marker)).toBe("accepted");
      await back;
    },
    close: () => client.close(),
  };
}

const pausesFor = (url: string, reason: string) => metric(url, "execmux_read_pauses_total", `reason="${reason}"`);

/** The daemon as a child process, so a crash shows as an exit and its memory is its own. */
/** Alive, still echoing for the bystander, and still starting processes for a newcomer. */
async function expectStillServing(daemon: RunningDaemon, bystander: Bystander, token?: string): Promise<void> {
  await bystander.echoes();
  expect(daemon.child.exitCode).toBeNull();
  const fresh = await connect(daemon.url, { reconnect: false, ...(token ? { token } : {}) });
  const handle = await fresh.start({ argv: ["echo", "still serving"] });
  expect(await handle.wait()).toBe(0);
  fresh.close();
}

/** Sends raw bytes over TCP and resolves with everything the daemon answered before it closed (or 2 s of silence). */
function rawHttp(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(port), hostname, () => socket.write(request));
    let answer = "";
    socket.setTimeout(2000, () => socket.destroy());
    socket.on("data", (data) => (answer += data.toString("latin1")));
    socket.on("close", () => resolve(answer));
    socket.on("error", reject);
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

describe("a frame or request that would throw", () => {
  it("closes at most the offending connection; the daemon and its other clients go on", async () => {
    const daemon = await spawnTestDaemon();
    const bystander = await startBystander(daemon.url);
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

    // Issue #22: ~10 KB of nesting in the `jsonrpc` member made the daemon exit.
    const deep = await WireClient.ready(daemon.url);
    deep.sendRaw(`{"jsonrpc":${nested(5000)},"id":1,"method":"environment/info"}`);
    expect((await deep.next((message) => message.id === -1)).error?.code).toBe(ErrorCode.InvalidRequest);
    // The same nesting in params, id and method, as request and as notification.
    for (const frame of [
      `{"id":2,"method":"process/start","params":${nested(5000)}}`,
      `{"id":${nested(5000)},"method":"process/list"}`,
      `{"id":3,"method":${nested(5000)}}`,
      `{"method":"process/ack","params":{"processId":${nested(5000)},"bytes":1}}`,
    ]) deep.sendRaw(frame);
    expect((await deep.request("process/list", {})).result).toEqual({ processes: [] });

    // A connection dropped while a long-poll waits and a start is in flight (the close handler).
    const dropped = await WireClient.ready(daemon.url);
    await dropped.call("process/start", { processId: "c", argv: ["cat"], cwd: "/", env: {}, pipeStdin: true });
    void dropped.request("process/read", { processId: "c", waitMs: 60_000 });
    void dropped.request("process/start", { processId: "d", argv: ["sleep", "30"], cwd: "/", env: {} });
    dropped.close();
    await dropped.closed;

    // Upgrades and hooks fed nonsense: each is refused on its own.
    const key = "dGhlIHNhbXBsZSBub25jZQ==";
    const upgrade = (path: string, headers: string) =>
      rawHttp(daemon.url, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${headers}\r\n`);
    expect(statusOf(await upgrade("/", `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Protocol: ,,,\r\n`))).toBe(400);
    expect(statusOf(await upgrade("/", "Sec-WebSocket-Version: 99\r\nSec-WebSocket-Key: short\r\n"))).toBe(400);
    expect(statusOf(await upgrade("/?token=%ZZ&%%", `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\nOrigin: ::not a url::\r\n`))).toBe(403);
    // Not the RPC path, whatever it would decode to: "only / accepts WebSocket connections".
    expect(statusOf(await upgrade("/%E0%A4%A", `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n`))).toBe(404);
    expect(statusOf(await rawHttp(daemon.url, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer\r\nContent-Length: x\r\n\r\n"))).toBe(400);
    expect(statusOf(await rawHttp(daemon.url, "\u0000\u0001garbage\r\n\r\n"))).toBe(400);

    await expectStillServing(daemon, bystander);
    bystander.close();
  });
});

describe("DNS rebinding", () => {
  it("refuses a Host the daemon does not answer to, and an Origin of the right host but the wrong scheme", async () => {
    const daemon = await spawnTestDaemon(["--allowed-hosts", "execmux.internal,*.example.test"]);
    const bystander = await startBystander(daemon.url);
    const { port } = new URL(daemon.url);
    // The rebinding page: its own name in Host and in Origin, resolved to 127.0.0.1.
    const rebound = { host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` };
    expect((await handshake(daemon.url, { headers: rebound })).status).toBe(403);
    expect(statusOf(await rawHttp(daemon.url, `GET /metrics HTTP/1.1\r\nHost: ${rebound.host}\r\nConnection: close\r\n\r\n`))).toBe(403);
    // Names it does answer to: IP literals, localhost, the listed ones.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `app.localhost:${port}`, `execmux.internal:${port}`, `ci.example.test:${port}`, `[::1]:${port}`]) {
      expect({ host, status: (await handshake(daemon.url, { headers: { host } })).status }).toEqual({ host, status: 101 });
    }
    // Same host and port, but https: not the daemon's own page.
    expect((await handshake(daemon.url, { headers: { origin: `https://127.0.0.1:${port}` } })).status).toBe(403);
    expect((await handshake(daemon.url, { headers: { origin: `http://127.0.0.1:${port}` } })).status).toBe(101);
    // Behind a TLS-terminating proxy the page is https, and the proxy says so.
    expect((await handshake(daemon.url, { headers: { origin: `https://127.0.0.1:${port}`, "x-forwarded-proto": "https" } })).status).toBe(101);
    await expectStillServing(daemon, bystander);
    bystander.close();
  });

  it("leaves the Host alone when a token is required and no --allowed-hosts is set (the token stops the page)", async () => {
    const daemon = await spawnTestDaemon([], { EXECMUX_TOKEN: "rebinding-token" });
    const withToken = { host: "sandbox-1:7373", authorization: "Bearer rebinding-token" };
    expect((await handshake(daemon.url, { headers: withToken })).status).toBe(101);
    expect((await handshake(daemon.url, { headers: { host: "attacker.example" } })).status).toBe(401);
  });
});

describe("replies a client never takes", () => {
  // 1 MiB of retained output answers each read with ~1.4 MB of base64:
  // without flow control these 400 reads grew the daemon by 1 GB. With it,
  // the replies held are those the reply budget and the kernel's socket
  // buffers take (several MB); the resident size also counts the garbage of
  // building them, not yet collected: 67-76 MiB in some fresh-clone runs on
  // the 2-core VM, under 64 in others.
  const READS = 400;
  const BOUND = 96 * MiB;

  it(`stops reading a client that does not take its replies; the daemon grows by less than ${BOUND / MiB} MiB`, async () => {
    const daemon = await spawnTestDaemon();
    const bystander = await startBystander(daemon.url);
    const attacker = await WireClient.ready(daemon.url);
    await attacker.call("process/start", { processId: "big", argv: ["head", "-c", String(MiB), "/dev/zero"], cwd: "/", env: {} });
    await attacker.closedOf("big");
    // The daemon loads its metrics library on the first scrape: that is not the attack's doing.
    await pausesFor(daemon.url, "replies");
    const before = daemonResidentBytes(daemon.pid);

    attacker.pauseReading();
    for (let index = 0; index < READS; index++) {
      attacker.send({ id: 1000 + index, method: "process/read", params: { processId: "big", afterSeq: 0 } });
    }
    // The daemon had to stop reading this socket: the attack reached it.
    await vi.waitFor(async () => expect(await pausesFor(daemon.url, "replies")).toBeGreaterThan(0), { timeout: 10_000 });
    await expectStillServing(daemon, bystander);
    expect(daemonResidentBytes(daemon.pid) - before).toBeLessThan(BOUND);
    attacker.close();
    bystander.close();
  });

  it("answers every request in order once the client reads again, each read cut to what the budget holds", async () => {
    // --retained-bytes above the output: each chunk is charged its bookkeeping
    // too (main's retention budget), so 1 MiB would evict the first chunks.
    const daemon = await spawnTestDaemon(["--reply-queue-bytes", String(256 * 1024), "--retained-bytes", String(2 * MiB)]);
    const client = await WireClient.ready(daemon.url);
    await client.call("process/start", { processId: "out", argv: ["head", "-c", String(MiB), "/dev/zero"], cwd: "/", env: {} });
    await client.closedOf("out");
    client.pauseReading();
    // Past the first, each read holds one chunk (at most 64 KiB for a JSON
    // client), and the kernel's socket buffers take several MB before the
    // daemon sees any of it unsent: enough reads to pass both.
    const READS_IN_ORDER = 200;
    for (let index = 0; index < READS_IN_ORDER; index++) client.send({ id: 500 + index, method: "process/read", params: { processId: "out", afterSeq: 0 } });
    await vi.waitFor(async () => expect(await pausesFor(daemon.url, "replies")).toBeGreaterThan(0), { timeout: 10_000 });
    client.resumeReading();
    const replies = await Promise.all(Array.from({ length: READS_IN_ORDER }, (_, index) => client.next((message) => message.id === 500 + index)));
    type Chunk = { seq: number; chunk: string };
    const bytesOf = (chunks: Chunk[]) => chunks.reduce((sum, chunk) => sum + Buffer.from(chunk.chunk, "base64").length, 0);
    for (const reply of replies) {
      // Each read starts at the cursor and holds at least one chunk, but
      // not the whole MiB: its base64 would not fit in 256 KiB.
      const chunks = reply.result!.chunks as Chunk[];
      expect(chunks[0]!.seq).toBe(1);
      expect(bytesOf(chunks)).toBeGreaterThan(0);
      expect(bytesOf(chunks)).toBeLessThan(MiB);
      expect(reply.result!.nextSeq).toBe(chunks.at(-1)!.seq + 1);
    }
    // Reading on from nextSeq gets the rest, as after any maxBytes.
    let afterSeq = Number(replies[0]!.result!.nextSeq) - 1;
    let total = bytesOf(replies[0]!.result!.chunks as Chunk[]);
    while (total < MiB) {
      const next = await client.call("process/read", { processId: "out", afterSeq });
      total += bytesOf(next.chunks as Chunk[]);
      afterSeq = Number(next.nextSeq) - 1;
    }
    expect(total).toBe(MiB);
    const order = client.messages.filter((message) => typeof message.id === "number" && message.id >= 500).map((message) => message.id);
    expect(order).toEqual(Array.from({ length: READS_IN_ORDER }, (_, index) => 500 + index));
  });
});

describe("a backlog of tiny frames behind a full reply queue", () => {
  it("handles every frame that waited, in order, once the client reads again", async () => {
    const daemon = await spawnTestDaemon(["--reply-queue-bytes", String(64 * 1024), "--max-requests-per-second", "1000000"]);
    const bystander = await startBystander(daemon.url);
    const client = await WireClient.ready(daemon.url);
    client.pauseReading();
    // Each 7-byte frame costs a ~150-byte parse error: the queue fills, and frames pile up behind it.
    const FRAMES = 100_000;
    for (let index = 0; index < FRAMES; index++) client.sendRaw("x");
    await vi.waitFor(async () => expect(await pausesFor(daemon.url, "replies")).toBeGreaterThan(0), { timeout: 10_000 });
    await bystander.echoes();
    client.resumeReading();
    expect((await client.request("process/list", {})).result).toEqual({ processes: [] });
    expect(client.messages.filter((message) => message.id === -1)).toHaveLength(FRAMES);
    await expectStillServing(daemon, bystander);
    bystander.close();
  });
});

describe("requests whose cost is out of proportion to their size", () => {
  const startParams = (envPolicy: unknown, env: Record<string, string> = {}) => ({ processId: `p${Math.random()}`, argv: ["true"], cwd: "/", env, envPolicy });

  it("matches globs in linear time and refuses oversized lists, cursors and environments at once", async () => {
    const daemon = await spawnTestDaemon();
    const bystander = await startBystander(daemon.url);
    const client = await WireClient.ready(daemon.url);

    // Issue #22: a 212-byte includeOnly glob froze the event loop for 14 s,
    // and every extra `*a` multiplied that: as regexes these would never end.
    for (const stars of [106, 128]) {
      const started = await client.request("process/start", startParams({ inherit: "all", includeOnly: ["*a".repeat(stars)] }, { ["a".repeat(300) + "b"]: "1" }));
      expect(started.result?.sandboxType).toBe("none");
      await bystander.echoes();
    }

    // Matching that would run long is refused with a limit, not run.
    const costly = await client.request(
      "process/start",
      startParams({ inherit: "none", set: Object.fromEntries(Array.from({ length: 4000 }, (_, index) => [`${"A".repeat(1000)}${index}`, "v"])), includeOnly: Array.from({ length: 128 }, () => `*${"?".repeat(250)}b`) }),
    );
    expect(costly.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "envPolicyGlobSteps" } });

    // 15 MB of exclude patterns, 5,000 environment names: refused by the schema before any work.
    const manyPatterns = await client.request("process/start", startParams({ inherit: "all", exclude: Array.from({ length: 15_000 }, (_, index) => `PATTERN_${index}_*`.padEnd(1000, "x")) }));
    expect(manyPatterns.error?.code).toBe(ErrorCode.InvalidParams);
    const manyNames = await client.request("process/start", startParams(null, Object.fromEntries(Array.from({ length: 5000 }, (_, index) => [`N${index}`, "v"]))));
    expect(manyNames.error?.code).toBe(ErrorCode.InvalidParams);
    // 100k names or 200k cursors: refused before JSON.parse builds them (an object wider than 16,384 members).
    const wide = await WireClient.connect(daemon.url);
    wide.send({ id: 1, method: "process/start", params: startParams(null, Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`N${index}`, "v"]))) });
    const cursors = Object.fromEntries(Array.from({ length: 200_000 }, (_, index) => [`p${index}`, 0]));
    wide.send({ id: 2, method: "initialize", params: { clientName: "x", resumeSessionId: "00000000-0000-0000-0000-000000000000", cursors } });
    await vi.waitFor(() => expect(wide.messages.filter((message) => message.id === -1)).toHaveLength(2), { timeout: 10_000 });
    for (const refused of wide.messages) expect(refused.error?.message).toMatch(/a JSON object has more than 16384 members$/);

    await expectStillServing(daemon, bystander);
    bystander.close();
  });
});

describe("tokens and non-RPC paths", () => {
  const TOKEN = "adversarial-secret-4242";

  it("never logs a token, upgrades only the RPC path, and warns about --token on a command line", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "trace", "--token", TOKEN]);
    const bystander = await startBystander(daemon.url, TOKEN);
    const bearer = { authorization: `Bearer ${TOKEN}` };
    // No upgrade anywhere but /, token or not.
    for (const path of ["/livez", "/readyz", "/metrics", "/console/", "/nowhere"]) {
      expect({ path, status: (await handshake(`${daemon.url}${path}?token=${TOKEN}`, { headers: bearer })).status }).toEqual({ path, status: 404 });
    }
    // Places a token used to reach the log: 404 messages, the WebSocket plugin's, a malformed request's raw bytes.
    expect((await fetch(`${httpUrl(daemon.url)}/nowhere?token=${TOKEN}`, { headers: bearer })).status).toBe(404);
    expect((await fetch(`${httpUrl(daemon.url)}/nowhere?%74oken=guess-${TOKEN}`)).status).toBe(401);
    await rawHttp(daemon.url, `GET /?token=${TOKEN} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: nope\r\n\r\n`);
    await handshake(daemon.url, { protocols: ["execmux", `execmux.bearer.${Buffer.from(`wrong-${TOKEN}`).toString("base64url")}`] });
    await expectStillServing(daemon, bystander, TOKEN);
    bystander.close();
    daemon.child.kill("SIGTERM");
    await daemon.exited;

    const logs = daemon.stderr();
    expect(logs).toMatch(/--token on the command line can be read by every user/);
    expect(logs).toContain("only / accepts WebSocket connections");
    const tokenBytes = [...Buffer.from(TOKEN)].join(",");
    for (const secret of [TOKEN, Buffer.from(TOKEN).toString("base64url"), tokenBytes]) expect(logs).not.toContain(secret);
  });
});

describe("one client against the others", () => {
  const [ALICE, MALLORY] = ["alice-token-0001", "mallory-token-0002"];

  it("keeps sessions and connections per client, so one cannot lock the others out or expire their sessions", async () => {
    const tokenFile = join(scratchDirectory("quota"), "tokens");
    writeFileSync(tokenFile, `${ALICE}\n${MALLORY}\n`);
    const quota = await spawnTestDaemon(
      ["--max-sessions", "8", "--max-sessions-per-client", "3", "--max-detached-sessions", "4", "--max-connections-per-client", "4", "--token-file", tokenFile],
    );
    const bystander = await startBystander(quota.url, ALICE);
    const aliceDetached = await WireClient.ready(quota.url, ALICE);
    const aliceSession = String(aliceDetached.messages[0]!.result!.sessionId);
    aliceDetached.close();
    await aliceDetached.closed;

    // Mallory takes her three sessions and keeps them; a fourth is refused, naming her quota.
    const mallory = await Promise.all([1, 2, 3].map(() => WireClient.ready(quota.url, MALLORY)));
    const fourth = await WireClient.connect(quota.url, MALLORY);
    expect((await fourth.request("initialize", { clientName: "m" })).error).toMatchObject({ data: { limit: "maxSessionsPerClient" } });
    // ... and a fifth connection is not even upgraded.
    expect((await handshake(quota.url, { headers: { authorization: `Bearer ${MALLORY}` } })).status).toBe(429);
    // Churning detached sessions expires only her own, never Alice's.
    for (const socket of [...mallory, fourth]) {
      socket.close();
      await socket.closed;
    }
    for (let round = 0; round < 6; round++) {
      const churn = await WireClient.ready(quota.url, MALLORY);
      churn.close();
      await churn.closed;
    }
    const resumed = await WireClient.connect(quota.url, ALICE);
    expect((await resumed.request("initialize", { clientName: "a", resumeSessionId: aliceSession })).result?.sessionId).toBe(aliceSession);
    await expectStillServing(quota, bystander, ALICE);
    bystander.close();
  });
});

describe("floods of frames that are not requests", () => {
  it("reads garbage and notifications no faster than the rate, in bounded slices of the event loop", async () => {
    const daemon = await spawnTestDaemon(["--max-requests-per-second", "1000"]);
    const bystander = await startBystander(daemon.url);
    const client = await WireClient.ready(daemon.url);
    // Past the burst (2,000 frames) the socket is read at 1,000 frames a second, whatever the frames are.
    const FRAMES = 3000;
    for (let index = 0; index < FRAMES; index++) client.send({ method: "process/ack", params: { processId: "none", bytes: 1 } });
    for (let index = 0; index < FRAMES; index++) client.sendRaw("x");
    await vi.waitFor(async () => expect(await pausesFor(daemon.url, "rate")).toBeGreaterThan(0), { timeout: 10_000 });
    await bystander.echoes();
    // Slowed, not refused: every malformed frame is answered, then the request after them.
    expect((await client.request("process/list", {})).result).toEqual({ processes: [] });
    expect(client.messages.filter((message) => message.id === -1)).toHaveLength(FRAMES);
    await expectStillServing(daemon, bystander);
    bystander.close();
  });

  it("rate-limits repeated log lines", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "info", "--token", "log-flood-token"]);
    const ATTEMPTS = 300;
    for (let index = 0; index < ATTEMPTS; index++) expect((await handshake(daemon.url)).status).toBe(401);
    const bystander = await startBystander(daemon.url, "log-flood-token");
    await expectStillServing(daemon, bystander, "log-flood-token");
    bystander.close();
    daemon.child.kill("SIGTERM");
    await daemon.exited;
    const refusals = daemon.stderr().split("\n").filter((line) => line.includes("missing websocket bearer token")).length;
    // 100 lines per message per 10 s window; the attempts span at most a few windows.
    expect(refusals).toBeGreaterThan(0);
    expect(refusals).toBeLessThan(ATTEMPTS);
  });
});
