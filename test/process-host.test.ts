/**
 * The process host (server/native, `execmux-host`): every process lives
 * there, with its pipes or terminal and its retained output. For `execmux
 * serve` on a fixed address the host outlives the daemon and is found again
 * by its socket, so the daemon can be SIGKILLed, or hand over on SIGUSR2,
 * and the same command started again takes every session back: clients
 * reconnect and resume, every byte once, in order.
 */
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Socket } from "node:net";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { WebSocket } from "ws";
import { connect, type ExecmuxClient, type ProcessHandle } from "@execmux/client";
import { launchServe, runCli, spawnDaemon, type RunningDaemon } from "./helpers/cli.js";
import { freePort } from "./helpers/free-port.js";
import { metric } from "./helpers/http.js";
import { descendants, hostOf, hostPidOf, isRunning } from "./helpers/procfs.js";
import { TEST_TLS_CERT, TEST_TLS_KEY } from "./helpers/tls-fixture.js";
import { collect, strictlyIncreasing } from "./helpers/collect.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";
import { HostLink } from "../server/dist/host/host-link.js";
import { LINK_VERSION, Msg, Reader, Writer } from "../server/dist/host/link-codec.js";
import { hostSocketPath } from "../server/dist/host/state-directory.js";

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");
const reconnect = { initialDelayMs: 5, maxDelayMs: 100, giveUpAfterMs: 60_000 };
const PATH = process.env.PATH ?? "/usr/bin:/bin";

/**
 * Prints LINES numbered lines, one every millisecond or so (long enough to be
 * cut mid-stream), then exits once the file GO exists: a slow machine cannot
 * make it finish before the test has looked at it.
 */
const PRINTER =
  '$| = 1; my ($name, $lines, $go) = @ARGV; for my $i (1 .. $lines) { print "$name line $i\\n"; select(undef, undef, undef, 0.001) } select(undef, undef, undef, 0.01) until -e $go';
const LINES = 1500;
const expected = (name: string, tty: boolean) =>
  Array.from({ length: LINES }, (_, index) => `${name} line ${index + 1}${tty ? "\r\n" : "\n"}`).join("");

/** The same `execmux serve` command every time: a fixed port, a private state directory. */
async function daemonCommand(): Promise<string[]> {
  const port = await freePort();
  return ["--listen", `ws://127.0.0.1:${port}`, "--log-level", "warn", "--state-directory", join(scratchDirectory("process-host"), "state")];
}
/** --tls-cert and --tls-key of the test certificate (127.0.0.1), written to files. */
function tlsArguments(): string[] {
  const directory = scratchDirectory("process-host-tls");
  writeFileSync(join(directory, "cert.pem"), TEST_TLS_CERT);
  writeFileSync(join(directory, "key.pem"), TEST_TLS_KEY);
  return ["--tls-cert", join(directory, "cert.pem"), "--tls-key", join(directory, "key.pem")];
}

/** ws, trusting the test certificate. */
class TrustingWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[], options: ConstructorParameters<typeof WebSocket>[2] = {}) {
    super(url, protocols, { ...options, ca: TEST_TLS_CERT });
  }
}

const listenOf = (command: string[]) => command[command.indexOf("--listen") + 1]!;
const stateOf = (command: string[]) => command[command.indexOf("--state-directory") + 1]!;

/** A client's WebSocket text frame (masked, as RFC 6455 requires of a client), for a payload under 126 bytes. */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, payload.map((byte, index) => byte ^ mask[index % 4]!)]);
}

/** Resolves once the handle printed something. */
const firstOutput = (handle: ProcessHandle) => new Promise<void>((resolve) => handle.onOutput(() => resolve()));
/** The number a process printed first (its `$$`, say). */
const printedNumber = (handle: ProcessHandle) => new Promise<number>((resolve) => handle.onOutput((event) => resolve(Number(Buffer.from(event.data).toString()))));

async function pidsOf(client: ExecmuxClient): Promise<Map<string, number | null>> {
  return new Map((await client.list()).map((info) => [info.processId, info.pid]));
}

/** Resolves once the daemon takes another connection from this client: a slot of its quota is free (429 until then). */
async function connectionSlotFrees(url: string, timeoutMs: number): Promise<void> {
  await vi.waitFor(
    async () => {
      const fresh = await WireClient.connect(url);
      fresh.close();
    },
    { timeout: timeoutMs, interval: 500 },
  );
}

async function stop(daemon: RunningDaemon): Promise<void> {
  daemon.child.kill("SIGTERM");
  expect((await daemon.exited).code).toBe(0);
}

describe("a daemon restart", () => {
  it.each(["plain", "tls"] as const)(
    "loses nothing but the connection: 24 pipe and PTY processes streaming while `execmux serve` is SIGKILLed and started again (%s client)",
    async (transport) => {
      const command = [...(await daemonCommand()), ...(transport === "tls" ? tlsArguments() : [])];
      let daemon = await spawnDaemon(command);
      const host = hostOf(daemon.child.pid!)!;
      expect(host).toBeDefined();
      const client = await connect(daemon.url, { reconnect, ...(transport === "tls" ? { WebSocket: TrustingWebSocket as never } : {}) });
      let resumed = 0;
      let disconnected = 0;
      client.on("resumed", () => resumed++);
      client.on("disconnected", () => disconnected++);

      const names = Array.from({ length: 24 }, (_, index) => `p${index}`);
      const go = join(scratchDirectory("process-host-go"), "go");
      const handles = await Promise.all(names.map((name, index) => client.start({ argv: ["perl", "-e", PRINTER, name, String(LINES), go], tty: index % 2 === 1 })));
      const results = handles.map(collect);
      const pidsBefore = await pidsOf(client);
      await Promise.all(handles.map(firstOutput));

      daemon.child.kill("SIGKILL");
      expect(await daemon.exited).toEqual({ code: null, signal: "SIGKILL" });
      // The processes never noticed: the host holds them, and their output meanwhile.
      expect(isRunning(host)).toBe(true);
      for (const pid of pidsBefore.values()) expect(isRunning(pid!)).toBe(true);

      daemon = await spawnDaemon(command);
      // The same command found the running host instead of starting another.
      expect(hostOf(daemon.child.pid!)).toBe(host);

      writeFileSync(go, "");
      const finished = await Promise.all(results);
      finished.forEach((result, index) => {
        const name = names[index]!;
        expect(result.exitCode, name).toBe(0);
        expect(sha256(result.data), name).toBe(sha256(expected(name, index % 2 === 1)));
        expect(strictlyIncreasing(result.seqs), name).toBe(true);
      });
      // The client saw its connection drop with the daemon, and resumed on the next one.
      expect(disconnected).toBeGreaterThanOrEqual(1);
      expect(resumed).toBeGreaterThanOrEqual(1);
      expect(await pidsOf(client)).toEqual(pidsBefore);

      client.close();
      await stop(daemon);
      // Nothing outlives the final shutdown: not the host, not a process.
      await vi.waitFor(() => expect([host, ...pidsBefore.values()].filter((pid) => isRunning(pid!))).toEqual([]));
    },
    120_000,
  );

  it("lets a process the old daemon had paused (its client stopped reading) run on without it, and the next daemon's client read it", async () => {
    const command = await daemonCommand();
    let daemon = await spawnDaemon(command);
    const stalled = await WireClient.connect(daemon.url);
    const { sessionId } = await stalled.call<{ sessionId: string }>("initialize", { clientName: "stalled" });
    stalled.send({ method: "initialized", params: {} });
    stalled.pauseReading();
    // 20 MB for a client that reads nothing: flow control pauses the process (it blocks on write).
    stalled.send({ id: "flood", method: "process/start", params: { processId: "flood", argv: ["sh", "-c", "head -c 20000000 /dev/zero; echo; echo end"], cwd: "/", env: { PATH } } });
    const host = hostOf(daemon.child.pid!)!;
    // The daemon paused it (its metrics count the pause it told the host of), and it blocks.
    await vi.waitFor(async () => expect(await metric(daemon.url, "execmux_flow_control_pauses_total")).toBeGreaterThan(0), { timeout: 20_000, interval: 50 });
    const flood = await vi.waitFor(
      () => {
        const pid = descendantNamed(host, "head");
        expect(pid).toBeDefined();
        expect(blockedOnWrite(pid!)).toBe(true);
        return pid!;
      },
      { timeout: 20_000, interval: 50 },
    );
    daemon.child.kill("SIGKILL");
    await daemon.exited;
    stalled.close();
    // With no daemon, the host reads on (keeping the newest output, as always): the process finishes.
    await vi.waitFor(() => expect(isRunning(flood)).toBe(false), { timeout: 20_000 });

    daemon = await spawnDaemon(command);
    // An upstream client resumes the session (no cursors: it reads by itself) and finds the end of the output.
    const reader = await WireClient.connect(daemon.url);
    await reader.call("initialize", { clientName: "reader", resumeSessionId: sessionId });
    reader.send({ method: "initialized", params: {} });
    const { processes } = await reader.call<{ processes: { processId: string; state: string; nextSeq: number }[] }>("process/list", {});
    expect(processes).toMatchObject([{ processId: "flood", state: "closed" }]);
    const tail = await reader.call<{ chunks: { chunk: string }[]; closed: boolean; gap?: unknown }>("process/read", { processId: "flood", afterSeq: Math.max(0, processes[0]!.nextSeq - 10) });
    expect(Buffer.concat(tail.chunks.map((chunk) => Buffer.from(chunk.chunk, "base64"))).toString()).toMatch(/end\n$/);
    expect(tail.closed).toBe(true);
    reader.close();
    await stop(daemon);
  }, 90_000);

  it("hands its sessions over on SIGUSR2 (a planned restart or upgrade) and exits 0; clients come back to the next daemon and resume", async () => {
    const command = await daemonCommand();
    let daemon = await spawnDaemon(command);
    const host = hostOf(daemon.child.pid!)!;
    const client = await connect(daemon.url, { reconnect });
    let resumed = 0;
    client.on("resumed", () => resumed++);
    const raw = await WireClient.ready(daemon.url);
    const go = join(scratchDirectory("process-host-go"), "go");
    writeFileSync(go, ""); // only the output matters here
    const handle = await client.start({ argv: ["perl", "-e", PRINTER, "only", String(LINES), go] });
    const result = collect(handle);
    await firstOutput(handle);

    daemon.child.kill("SIGUSR2");
    // Started at once, as a deploy script would: it waits for the old daemon to let go of the port.
    const next = spawnDaemon(command);
    // Told to come back (1012: service restart), not dropped.
    expect(await raw.closed).toBe(1012);
    expect((await daemon.exited).code).toBe(0);
    expect(isRunning(host)).toBe(true);
    daemon = await next;
    expect(hostOf(daemon.child.pid!)).toBe(host);
    const { data, exitCode } = await result;
    expect(exitCode).toBe(0);
    expect(sha256(data)).toBe(sha256(expected("only", false)));
    expect(resumed).toBeGreaterThanOrEqual(1);
    const newcomer = await WireClient.ready(daemon.url);
    expect(await newcomer.call("process/list", {})).toEqual({ processes: [] });
    newcomer.close();

    client.close();
    await stop(daemon);
    await vi.waitFor(() => expect(isRunning(host)).toBe(false));
  }, 60_000);

  it("refuses a second daemon for the same address while one is attached, naming it, and the first keeps serving", async () => {
    const command = await daemonCommand();
    const daemon = await spawnDaemon(command);
    const second = await runCli(["serve", ...command]);
    expect(second.code).not.toBe(0);
    // Whichever it meets first: the host turning it away (naming the daemon it serves), or the port.
    expect(second.stderr).toMatch(new RegExp(`another execmux daemon \\(pid ${daemon.child.pid}\\) is attached to this process host|EADDRINUSE`));
    // The daemon listens before it waits for its host, so the port usually answers first: the host's own
    // refusal is asked for directly, as a second daemon's hello on the host's socket.
    const intruder = new HostLink(await connectTo(hostSocketPath(stateOf(command), listenOf(command))), () => undefined, () => undefined);
    await expect(intruder.request(Msg.Hello, hello(LINK_VERSION))).rejects.toThrow(`another execmux daemon (pid ${daemon.child.pid}) is attached to this process host`);
    intruder.close();
    const client = await connect(daemon.url, { reconnect: false });
    const handle = await client.start({ argv: ["echo", "still serving"] });
    expect((await collect(handle)).data.toString()).toBe("still serving\n");
    client.close();
    await stop(daemon);
  }, 60_000);

  it("starts one host when two daemons for one address start at once: one serves, the other is refused", async () => {
    const command = await daemonCommand();
    const racers = await Promise.allSettled([spawnDaemon(command), spawnDaemon(command)]);
    const winners = racers.filter((racer) => racer.status === "fulfilled");
    expect(winners).toHaveLength(1);
    const loser = racers.find((racer) => racer.status === "rejected") as PromiseRejectedResult;
    // Whichever it met first: the host turning it away (naming the daemon it serves), or the port.
    expect(String(loser.reason)).toMatch(/another execmux daemon \(pid \d+\) is attached to this process host|EADDRINUSE/);
    const daemon = (winners[0] as PromiseFulfilledResult<RunningDaemon>).value;
    const client = await connect(daemon.url, { reconnect: false });
    const handle = await client.start({ argv: ["echo", "still serving"] });
    expect((await collect(handle)).data.toString()).toBe("still serving\n");
    client.close();
    await stop(daemon);
  }, 60_000);

  it("stops everything on a SIGTERM sent while its daemon is still starting: a stop, not a restart", async () => {
    const command = [...(await daemonCommand()).filter((argument) => argument !== "warn" && argument !== "--log-level"), "--log-level", "info"];
    const first = await spawnDaemon(command);
    const host = hostOf(first.child.pid!)!;
    const client = await connect(first.url, { reconnect: false });
    const handle = await client.start({ argv: ["sh", "-c", "echo $$; exec sleep 600"] });
    const pid = hostPidOf(await printedNumber(handle), first.child.pid!);
    client.close();
    first.child.kill("SIGUSR2");
    expect((await first.exited).code).toBe(0);

    const { child, exited } = launchServe(command);
    // Its first log line, before it has asked for the host: its signal handlers are in, it is far from listening.
    await new Promise<void>((resolve) => createInterface({ input: child.stderr! }).on("line", (line) => line.includes("tokens loaded") && resolve()));
    child.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    // A stop, not a restart: the session's process and the host are gone.
    await vi.waitFor(() => expect([host, pid].filter(isRunning)).toEqual([]), { timeout: 15_000 });
  }, 60_000);

  it("keeps every session when the port is taken: the daemon cannot listen, and leaves the host to one that can", async () => {
    const command = await daemonCommand();
    let daemon = await spawnDaemon(command);
    const host = hostOf(daemon.child.pid!)!;
    const client = await WireClient.connect(daemon.url);
    const { sessionId } = await client.call<{ sessionId: string }>("initialize", { clientName: "kept" });
    client.send({ method: "initialized", params: {} });
    await client.call("process/start", { processId: "kept", argv: ["sh", "-c", "echo $$; exec sleep 600"], cwd: "/", env: { PATH } });
    await vi.waitUntil(() => /^\d+\n$/.test(client.output("kept")));
    const pid = hostPidOf(Number(client.output("kept")), daemon.child.pid!);
    daemon.child.kill("SIGKILL");
    await daemon.exited;

    // Something else holds the port meanwhile.
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(Number(new URL(listenOf(command)).port), "127.0.0.1", resolve));
    const refused = await runCli(["serve", ...command]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/EADDRINUSE/);
    expect([host, pid].every(isRunning)).toBe(true);
    await new Promise<void>((resolve) => squatter.close(() => resolve()));

    daemon = await spawnDaemon(command);
    expect(hostOf(daemon.child.pid!)).toBe(host);
    const resumed = await WireClient.connect(daemon.url);
    await resumed.call("initialize", { clientName: "back", resumeSessionId: sessionId });
    resumed.send({ method: "initialized", params: {} });
    const { processes } = await resumed.call<{ processes: { processId: string; pid: number; state: string }[] }>("process/list", {});
    expect(processes).toMatchObject([{ processId: "kept", pid, state: "running" }]);
    resumed.close();
    await stop(daemon);
  }, 60_000);

  it("stops, saying so, when its host dies (every session went with it), and leaves no process behind", async () => {
    const command = await daemonCommand();
    const daemon = await spawnDaemon(command);
    const host = hostOf(daemon.child.pid!)!;
    const client = await connect(daemon.url, { reconnect: false });
    const handle = await client.start({ argv: ["sh", "-c", "echo $$; exec sleep 600"] });
    const pid = hostPidOf(await printedNumber(handle), daemon.child.pid!);
    process.kill(host, "SIGKILL");
    expect((await daemon.exited).code).toBe(1);
    expect(daemon.stderr()).toContain("the process host is gone");
    // The host was the init of the processes' PID namespace: they went with it.
    await vi.waitFor(() => expect(isRunning(pid)).toBe(false), { timeout: 15_000 });
  }, 60_000);
});

describe("a host with no daemon", () => {
  it("keeps its sessions for their TTL, then ends them and itself: nothing is left once no daemon and no session is", async () => {
    const command = [...(await daemonCommand()), "--session-ttl-ms", "1500"];
    const daemon = await spawnDaemon(command);
    const host = hostOf(daemon.child.pid!)!;
    const client = await connect(daemon.url, { reconnect: false });
    const handle = await client.start({ argv: ["sh", "-c", "echo $$; exec sleep 600"] });
    const pid = hostPidOf(await printedNumber(handle), daemon.child.pid!);
    daemon.child.kill("SIGKILL");
    await daemon.exited;
    client.close();
    // Still there for a daemon that comes back within the TTL...
    expect([host, pid].every(isRunning)).toBe(true);
    // ...and gone once the session expired: the host expires it itself.
    await vi.waitFor(() => expect([host, pid].filter(isRunning)).toEqual([]), { timeout: 15_000, interval: 100 });
    expect(readFileSync(`${hostSocketPath(stateOf(command), listenOf(command))}.log`, "utf8")).toContain("expired with no daemon attached");
  }, 60_000);

  it("ends at once when its daemon hands over with no session left to keep", async () => {
    const command = await daemonCommand();
    const daemon = await spawnDaemon(command);
    const host = hostOf(daemon.child.pid!)!;
    daemon.child.kill("SIGUSR2");
    expect((await daemon.exited).code).toBe(0);
    await vi.waitFor(() => expect(isRunning(host)).toBe(false), { timeout: 15_000 });
  }, 60_000);
});

describe("a host's files in the state directory", () => {
  it("are removed when the host ends, and those of a SIGKILLed host when the next one starts, at any address", async () => {
    const state = join(scratchDirectory("process-host-files"), "state");
    const command = async () => ["--listen", `ws://127.0.0.1:${await freePort()}`, "--log-level", "warn", "--state-directory", state];
    const hostFiles = () => readdirSync(state).filter((name) => name.startsWith("host-")).sort();
    const filesOf = (command: string[]) => {
      const socket = basename(hostSocketPath(state, listenOf(command)));
      return [socket, `${socket}.lock`, `${socket}.log`];
    };
    const firstCommand = await command();
    const first = await spawnDaemon(firstCommand);
    expect(hostFiles()).toEqual(filesOf(firstCommand));
    process.kill(hostOf(first.child.pid!)!, "SIGKILL");
    expect((await first.exited).code).toBe(1);
    // Nobody was left to remove them.
    expect(hostFiles()).toEqual(filesOf(firstCommand));
    const secondCommand = await command();
    const second = await spawnDaemon(secondCommand);
    expect(hostFiles()).toEqual(filesOf(secondCommand));
    const host = hostOf(second.child.pid!)!;
    second.child.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
    await vi.waitFor(() => expect(isRunning(host)).toBe(false), { timeout: 15_000 });
    expect(hostFiles()).toEqual([]);
  }, 60_000);
});

describe("a daemon run under V8's profiler", () => {
  // --perf-basic-prof opens /tmp/perf-PID.map before any JavaScript runs, and
  // without close-on-exec: no descriptor of the daemon's may end up in the
  // host or its children, nor be taken for a client socket.
  it("answers every client as usual", async () => {
    const daemon = await spawnDaemon(await daemonCommand(), { NODE_OPTIONS: "--perf-basic-prof-only-functions" });
    try {
      for (let client = 0; client < 3; client++) {
        const wire = await WireClient.ready(daemon.url);
        const processId = `profiled-${client}`;
        await wire.call("process/start", { processId, argv: ["sh", "-c", "echo hi; ls -l /proc/self/fd"], cwd: "/", env: { PATH }, tty: false });
        await wire.closedOf(processId);
        const [first, ...listing] = wire.output(processId).trim().split("\n");
        expect(first).toBe("hi");
        // 0, 1, 2 and ls's own directory: nothing of the daemon's, its profiler's map least of all.
        expect(listing.filter((line) => / \d+ -> /.test(line)).length).toBeLessThanOrEqual(4);
        expect(listing.join("\n")).not.toContain("perf-");
        wire.close();
      }
    } finally {
      await stop(daemon);
      rmSync(`/tmp/perf-${daemon.child.pid}.map`, { force: true });
    }
  }, 60_000);
});

describe("the host's environment", () => {
  it("holds no EXECMUX_* setting, so no token: every child could read it (the host is their pid 1), and the host needs none", async () => {
    const secret = randomBytes(16).toString("hex");
    const daemon = await spawnDaemon(await daemonCommand(), { EXECMUX_TOKEN: secret });
    const host = hostOf(daemon.child.pid!)!;
    const environment = readFileSync(`/proc/${host}/environ`, "latin1");
    expect(environment).not.toContain(secret);
    expect(environment.split("\0").filter((entry) => entry.startsWith("EXECMUX_"))).toEqual([]);
    const client = await WireClient.ready(daemon.url, secret);
    await client.call("process/start", { processId: "peek", argv: ["sh", "-c", "tr '\\0' '\\n' < /proc/1/environ; echo done"], cwd: "/", env: { PATH } });
    await client.closedOf("peek");
    expect(client.output("peek")).toMatch(/done\n$/);
    expect(client.output("peek")).not.toContain(secret);
    client.close();
    await stop(daemon);
  }, 60_000);
});

describe("a client that stops reading", () => {
  it("is dropped when it stops answering pings, though output waits for it", async () => {
    const command = [...(await daemonCommand()), "--ping-interval-ms", "200", "--ping-timeout-ms", "400", "--max-connections-per-client", "1"];
    const daemon = await spawnDaemon(command);
    const stalled = await WireClient.ready(daemon.url);
    await stalled.call("process/start", { processId: "flood", argv: ["cat", "/dev/zero"], cwd: "/", env: {} });
    stalled.pauseReading();
    // Its one connection slot frees only once the daemon has dropped it.
    await connectionSlotFrees(daemon.url, 20_000);
    stalled.close();
    await stop(daemon);
  }, 60_000);
});

describe("a client's WebSocket", () => {
  it("gets its pings answered, and on SIGTERM a close with a code", async () => {
    const daemon = await spawnDaemon(await daemonCommand());
    const socket = new WebSocket(daemon.url);
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const pong = new Promise<Buffer>((resolve) => socket.once("pong", resolve));
    socket.ping("are you there");
    expect((await pong).toString()).toBe("are you there");
    const closed = new Promise<[number, string]>((resolve) => socket.once("close", (code, reason) => resolve([code, reason.toString()])));
    daemon.child.kill("SIGTERM");
    expect(await closed).toEqual([1001, "execmux is shutting down"]);
    expect((await daemon.exited).code).toBe(0);
  }, 60_000);

  it.each(["in the handshake's own write", "right behind the handshake, before the 101"])("loses no byte a client sends %s", async (when) => {
    const daemon = await spawnDaemon(await daemonCommand());
    const { port } = new URL(daemon.url);
    const socket = createConnection({ host: "127.0.0.1", port: Number(port) });
    await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    const handshake = Buffer.from(
      `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    const first = maskedTextFrame(JSON.stringify({ id: 1, method: "initialize", params: { clientName: "raw" } }));
    const second = maskedTextFrame(JSON.stringify({ id: 2, method: "process/list", params: {} }));
    let received = "";
    const answered = new Promise<void>((resolve) =>
      socket.on("data", (chunk: Buffer) => {
        received += chunk.toString("latin1");
        // Both answered (in either order: initialize answers after the method that waited for it).
        if (received.includes('"id":1') && received.includes('"id":2')) resolve();
      }),
    );
    if (when === "in the handshake's own write") socket.write(Buffer.concat([handshake, first, second]));
    else {
      // Segments of their own, in later turns: they arrive while the daemon reads the handshake, or just after.
      socket.setNoDelay(true);
      socket.write(handshake);
      setImmediate(() => {
        socket.write(first);
        setImmediate(() => socket.write(second));
      });
    }
    await answered;
    expect(received).toMatch(/^HTTP\/1\.1 101 /);
    socket.destroy();
    await stop(daemon);
  }, 60_000);

  it("is let go when a takeover closes it while it reads nothing, though the close waits behind output", async () => {
    // Pings would drop it anyway: they are out of the way here.
    const command = [...(await daemonCommand()), "--ping-interval-ms", "600000", "--max-connections-per-client", "2"];
    const daemon = await spawnDaemon(command);
    const stalled = await WireClient.connect(daemon.url);
    const { sessionId } = await stalled.call<{ sessionId: string }>("initialize", { clientName: "stalled" });
    stalled.send({ method: "initialized", params: {} });
    await stalled.call("process/start", { processId: "flood", argv: ["cat", "/dev/zero"], cwd: "/", env: {} });
    stalled.pauseReading();
    // Another connection takes the session over: the daemon closes the first (4001) behind the output it did not read.
    const taker = await WireClient.connect(daemon.url);
    await taker.call("initialize", { clientName: "taker", resumeSessionId: sessionId, takeover: true });
    taker.send({ method: "initialized", params: {} });
    // The taker keeps every message it reads: the flood stops before it fills this process.
    await taker.call("process/terminate", { processId: "flood" });
    // The stalled socket's slot frees only once the daemon has dropped it: after ws's 30 s for a close handshake.
    await connectionSlotFrees(daemon.url, 55_000);
    taker.close();
    stalled.close();
    await stop(daemon);
  }, 90_000);
});

function connectTo(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    socket.once("connect", () => resolve(socket)).once("error", reject);
  });
}

/** A daemon's hello (proto.h MSG_HELLO after the id): link version, pid, retained bytes, retention budget, kill grace, exit wait, end with the daemon. */
const hello = (version: number) => (writer: Writer) => writer.u32(version).u32(process.pid).u64(1024 * 1024).u64(1024 * 1024 * 1024).u32(2000).u32(50).u32(0);

describe("the link between a daemon and its host", () => {
  it("refuses a daemon of another link version, naming both, and keeps its sessions for one that matches", async () => {
    const command = await daemonCommand();
    let daemon = await spawnDaemon(command);
    const host = hostOf(daemon.child.pid!)!;
    const client = await WireClient.connect(daemon.url);
    const { sessionId } = await client.call<{ sessionId: string }>("initialize", { clientName: "kept" });
    client.send({ method: "initialized", params: {} });
    await client.call("process/start", { processId: "kept", argv: ["sh", "-c", "echo $$; exec sleep 600"], cwd: "/", env: { PATH } });
    await vi.waitUntil(() => /^\d+\n$/.test(client.output("kept")));
    const pid = hostPidOf(Number(client.output("kept")), daemon.child.pid!);
    daemon.child.kill("SIGKILL");
    await daemon.exited;

    // A daemon of another execmux (a future link version) finds the host.
    let lost: Error | undefined;
    const future = new HostLink(await connectTo(hostSocketPath(stateOf(command), listenOf(command))), () => undefined, (error) => (lost = error));
    await expect(future.request(Msg.Hello, hello(LINK_VERSION + 98))).rejects.toThrow(`this process host speaks link version ${LINK_VERSION} and the daemon ${LINK_VERSION + 98}`);
    future.close();
    // Once the host has let that link go, its session and process are still there...
    await vi.waitFor(() => expect(lost).toBeDefined());
    expect([host, pid].every(isRunning)).toBe(true);

    // ...for a daemon that speaks its version.
    daemon = await spawnDaemon(command);
    expect(hostOf(daemon.child.pid!)).toBe(host);
    const resumed = await WireClient.connect(daemon.url);
    await resumed.call("initialize", { clientName: "back", resumeSessionId: sessionId });
    resumed.send({ method: "initialized", params: {} });
    const { processes } = await resumed.call<{ processes: { processId: string; pid: number; state: string }[] }>("process/list", {});
    expect(processes).toMatchObject([{ processId: "kept", pid, state: "running" }]);
    resumed.close();
    await stop(daemon);
    await vi.waitFor(() => expect([host, pid].filter(isRunning)).toEqual([]));
  }, 60_000);

  it("cuts frames out of the stream however it is split, in order", async () => {
    const path = join(scratchDirectory("process-host-frames"), "link.sock");
    const texts = Array.from({ length: 200 }, (_, index) => randomBytes(index * 331).toString("base64"));
    const stream = Buffer.concat(texts.map((text, index) => new Writer(Msg.Log).u8(index % 2 ? 30 : 40).str(text).done()));
    const server = createServer((socket) => {
      // Random cuts, each written in a turn of its own: frames split anywhere, several in one read.
      const parts: Buffer[] = [];
      for (let offset = 0; offset < stream.length; ) {
        const size = 1 + Math.floor(Math.random() * 3000);
        parts.push(stream.subarray(offset, offset + size));
        offset += size;
      }
      const next = () => {
        const part = parts.shift();
        if (part) socket.write(part, () => setImmediate(next));
      };
      next();
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    onTestFinished(() => void server.close());
    const received: { level: number; text: string }[] = [];
    new HostLink(await connectTo(path), (type, payload) => {
      expect(type).toBe(Msg.Log);
      const reader = new Reader(payload);
      received.push({ level: reader.u8(), text: reader.str() });
    }, () => undefined);
    await vi.waitFor(() => expect(received).toHaveLength(texts.length));
    expect(received).toEqual(texts.map((text, index) => ({ level: index % 2 ? 30 : 40, text })));
  });
});

/** The first descendant of `pid` whose command is `name`. */
const descendantNamed = (pid: number, name: string) => descendants(pid).find((child) => commOf(child) === name);

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "latin1").trim();
  } catch {
    return "";
  }
}

/** True while the process sleeps in a write to its (full) stdout. */
function blockedOnWrite(pid: number): boolean {
  try {
    return ["pipe_write", "anon_pipe_write", "wait_woken"].includes(readFileSync(`/proc/${pid}/wchan`, "latin1"));
  } catch {
    return false;
  }
}
