/**
 * The process host (server/src/host): `execmux serve` keeps sessions,
 * processes and retained output in a process that faces no network, so the
 * daemon listening on the port can die and be started again with the same
 * command while every process keeps running and every client resumes.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PassThrough, Readable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { connect, type ExecmuxClient, type ProcessHandle } from "@execmux/client";
import { codexSandbox, pathToFileUri } from "@execmux/shared";
import { launchServe, runCli, spawnDaemon, type RunningDaemon } from "./helpers/cli.js";
import { freePort } from "./helpers/free-port.js";
import { frontOf, hostOf, hostPidOf, isRunning, spawnerOf } from "./helpers/procfs.js";
import { TEST_TLS_CERT, TEST_TLS_KEY } from "./helpers/tls-fixture.js";
import { collect, strictlyIncreasing } from "./helpers/collect.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";
import { agreedVersion, hostSocketPath } from "../server/dist/host/host-protocol.js";
import { encodeFrame, FrameKind, FrameReader, readFirstFrame } from "../server/dist/host/link-frames.js";

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");
const reconnect = { initialDelayMs: 5, maxDelayMs: 100, giveUpAfterMs: 60_000 };

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
  // A plain client's socket belongs to the host once the daemon handed it over: the daemon's death does not even drop it.
  // A TLS client's bytes are relayed by the daemon (its TLS session lives there): it reconnects and resumes.
  it.each([
    { transport: "plain", killed: "daemon listening on the port" },
    { transport: "tls", killed: "execmux serve" },
  ] as const)("is invisible but for a reconnect: 24 pipe and PTY processes streaming while the $killed is SIGKILLed ($transport client)", async ({ transport, killed }) => {
    const command = [...(await daemonCommand()), ...(transport === "tls" ? tlsArguments() : [])];
    let daemon = await spawnDaemon(command);
    const host = hostOf(daemon.child.pid!)!;
    expect(host).toBeDefined();
    const front = frontOf(host)!;
    expect(front).toBeDefined();
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

    if (killed === "execmux serve") daemon.child.kill("SIGKILL");
    else process.kill(front, "SIGKILL");
    // Either takes the other with it: `execmux serve` exits as its daemon did, as a shell would report it.
    expect(await daemon.exited).toEqual(killed === "execmux serve" ? { code: null, signal: "SIGKILL" } : { code: 137, signal: null });
    // The processes never noticed: the host holds them.
    expect(isRunning(host)).toBe(true);
    for (const pid of pidsBefore.values()) expect(isRunning(pid!)).toBe(true);

    daemon = await spawnDaemon(command);
    // The same command found the running host instead of starting another, and the host started a new daemon.
    expect(hostOf(daemon.child.pid!)).toBeUndefined();
    expect(frontOf(host)).toEqual(expect.any(Number));
    expect(frontOf(host)).not.toBe(front);

    writeFileSync(go, "");
    const finished = await Promise.all(results);
    finished.forEach((result, index) => {
      const name = names[index]!;
      expect(result.exitCode, name).toBe(0);
      expect(sha256(result.data), name).toBe(sha256(expected(name, index % 2 === 1)));
      expect(strictlyIncreasing(result.seqs), name).toBe(true);
    });
    if (transport === "tls") expect(resumed).toBeGreaterThanOrEqual(1);
    else expect({ disconnected, resumed }).toEqual({ disconnected: 0, resumed: 0 });
    expect(isRunning(front)).toBe(false);
    expect(await pidsOf(client)).toEqual(pidsBefore);

    client.close();
    await stop(daemon);
    // Nothing outlives the final shutdown: not the host, not a process.
    await vi.waitFor(() => expect([host, ...pidsBefore.values()].filter((pid) => isRunning(pid!))).toEqual([]));
  }, 120_000);

  it("hands its sessions over on SIGUSR2 (a planned restart or upgrade) and exits 0; the next daemon resumes them", async () => {
    const command = await daemonCommand();
    let daemon = await spawnDaemon(command);
    const host = hostOf(daemon.child.pid!)!;
    const client = await connect(daemon.url, { reconnect });
    let disconnected = 0;
    client.on("disconnected", () => disconnected++);
    const go = join(scratchDirectory("process-host-go"), "go");
    writeFileSync(go, ""); // only the output matters here
    const handle = await client.start({ argv: ["perl", "-e", PRINTER, "only", String(LINES), go] });
    const result = collect(handle);
    await firstOutput(handle);

    daemon.child.kill("SIGUSR2");
    // Started at once, as a deploy script would: it waits for the old daemon to let go of the port.
    const next = spawnDaemon(command);
    expect((await daemon.exited).code).toBe(0);
    expect(isRunning(host)).toBe(true);
    daemon = await next;
    const { data, exitCode } = await result;
    expect(exitCode).toBe(0);
    expect(sha256(data)).toBe(sha256(expected("only", false)));
    // The host kept the client's connection through the hand-over, and the next daemon takes new ones.
    expect(disconnected).toBe(0);
    const newcomer = await WireClient.ready(daemon.url);
    expect(await newcomer.call("process/list", {})).toEqual({ processes: [] });
    newcomer.close();

    client.close();
    await stop(daemon);
    await vi.waitFor(() => expect(isRunning(host)).toBe(false));
  }, 60_000);

  it("starts one host when two daemons for one address start at once, and refuses a second daemon while one serves", async () => {
    const command = await daemonCommand();
    const racers = await Promise.allSettled([spawnDaemon(command), spawnDaemon(command)]);
    const winners = racers.filter((racer) => racer.status === "fulfilled");
    expect(winners).toHaveLength(1);
    const loser = racers.find((racer) => racer.status === "rejected") as PromiseRejectedResult;
    // The lock lets one start a host; the other attaches to that host after it and is refused (two hosts would mean a second listener).
    expect(String(loser.reason)).toMatch(/another execmux daemon \(pid \d+\) is attached/);
    const daemon = (winners[0] as PromiseFulfilledResult<RunningDaemon>).value;
    const second = await runCli(["serve", ...command]);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(/another execmux daemon \(pid \d+\) is attached/);
    const client = await connect(daemon.url, { reconnect: false });
    const handle = await client.start({ argv: ["echo", "still serving"] });
    expect((await collect(handle)).data.toString()).toBe("still serving\n");
    client.close();
    await stop(daemon);
  }, 60_000);

  it("ends a port-0 daemon's host with the daemon: nobody could find that host again", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn", "--state-directory", join(scratchDirectory("process-host"), "state")]);
    const host = hostOf(daemon.child.pid!)!;
    const client = await connect(daemon.url, { reconnect: false });
    const handle = await client.start({ argv: ["sh", "-c", "echo $$; exec sleep 600"] });
    const pid = hostPidOf(await new Promise<number>((resolve) => handle.onOutput((event) => resolve(Number(Buffer.from(event.data).toString())))), daemon.child.pid);
    daemon.child.kill("SIGKILL");
    await vi.waitFor(() => expect([host, pid].filter(isRunning)).toEqual([]), { timeout: 15_000 });
  }, 60_000);

  it("stops everything on a SIGTERM sent while its daemon is still starting: the host holds the signal until the daemon can act on it", async () => {
    const command = [...(await daemonCommand()).filter((argument) => argument !== "warn" && argument !== "--log-level"), "--log-level", "info"];
    const first = await spawnDaemon(command);
    const host = hostOf(first.child.pid!)!;
    const client = await connect(first.url, { reconnect: false });
    const handle = await client.start({ argv: ["sh", "-c", "echo $$; exec sleep 600"] });
    const pid = hostPidOf(await new Promise<number>((resolve) => handle.onOutput((event) => resolve(Number(Buffer.from(event.data).toString())))), first.child.pid);
    client.close();
    first.child.kill("SIGUSR2");
    expect((await first.exited).code).toBe(0);

    const { child, exited } = launchServe(command);
    // Logged once the host has been asked for the daemon, which then takes a while to listen.
    await new Promise<void>((resolve) => createInterface({ input: child.stderr! }).on("line", (line) => line.includes("found the running process host") && resolve()));
    child.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    // A stop, not a restart: the session's process and the host are gone.
    await vi.waitFor(() => expect([host, pid].filter(isRunning)).toEqual([]), { timeout: 15_000 });
  }, 60_000);

  it("stops, saying so, when its host dies (every session went with it), and leaves no process behind", async () => {
    const command = await daemonCommand();
    const daemon = await spawnDaemon(command);
    const host = hostOf(daemon.child.pid!)!;
    const client = await connect(daemon.url, { reconnect: false });
    const handle = await client.start({ argv: ["sh", "-c", "echo $$; exec sleep 600"] });
    const pid = hostPidOf(await new Promise<number>((resolve) => handle.onOutput((event) => resolve(Number(Buffer.from(event.data).toString())))), daemon.child.pid);
    process.kill(host, "SIGKILL");
    expect((await daemon.exited).code).toBe(1);
    expect(daemon.stderr()).toContain("the process host is gone");
    // Its spawner saw the host go and took every child with it.
    await vi.waitFor(() => expect(isRunning(pid)).toBe(false), { timeout: 15_000 });
  }, 60_000);
});

describe("a daemon run under V8's profiler", () => {
  // --perf-basic-prof opens /tmp/perf-PID.map before any JavaScript runs, and
  // without close-on-exec: taken for an inherited descriptor and closed, its
  // number went to the next client socket, and V8 wrote symbol lines into it
  // ahead of the 101 (the client saw "Expected HTTP/").
  it("answers every client as usual: the profiler's map file is not taken for an inherited descriptor", async () => {
    const daemon = await spawnDaemon(await daemonCommand(), { NODE_OPTIONS: "--perf-basic-prof-only-functions" });
    const host = hostOf(daemon.child.pid!)!;
    const front = frontOf(host)!;
    const spawner = spawnerOf(host)!;
    // The spawner's map is named after its pid in its own PID namespace (the last of NSpid).
    const spawnerPid = readFileSync(`/proc/${spawner}/status`, "latin1").match(/^NSpid:(.*)$/m)![1]!.trim().split(/\s+/).pop();
    try {
      // The front closed what it inherited at its start, but kept its own map open.
      const frontFiles = readdirSync(`/proc/${front}/fd`).map((fd) => readlinkOrEmpty(`/proc/${front}/fd/${fd}`));
      expect(frontFiles).toContain(`/tmp/perf-${front}.map`);
      for (let client = 0; client < 3; client++) {
        const wire = await WireClient.ready(daemon.url);
        const processId = `profiled-${client}`;
        await wire.call("process/start", { processId, argv: ["echo", "hi"], cwd: "/", env: { PATH: "/usr/bin:/bin" }, tty: false });
        await wire.closedOf(processId);
        const output = wire.notifications(processId).filter((message) => message.method === "process/output");
        expect(Buffer.concat(output.map((message) => Buffer.from(String(message.params?.chunk), "base64"))).toString()).toBe("hi\n");
        wire.close();
      }
    } finally {
      await stop(daemon);
      for (const pid of [daemon.child.pid!, host, front, spawnerPid]) rmSync(`/tmp/perf-${pid}.map`, { force: true });
    }
  }, 60_000);
});

const readlinkOrEmpty = (path: string) => {
  try {
    return readlinkSync(path);
  } catch {
    return "";
  }
};

describe("the host's socket", () => {
  it("keeps the token out of the host's environment: it has no EXECMUX_* setting but its own", async () => {
    const secret = randomBytes(16).toString("hex");
    const daemon = await spawnDaemon(await daemonCommand(), { EXECMUX_TOKEN: secret });
    const host = hostOf(daemon.child.pid!)!;
    const environment = readFileSync(`/proc/${host}/environ`, "latin1");
    expect(environment).not.toContain(secret);
    const names = environment.split("\0").filter((entry) => entry.startsWith("EXECMUX_")).map((entry) => entry.split("=")[0]);
    expect(names.sort()).toEqual(["EXECMUX_HOST_CONFIG", "EXECMUX_HOST_PRIVATE", "EXECMUX_HOST_SOCKET"]);
    await stop(daemon);
  }, 60_000);

  it("is out of a sandboxed process's sight: it could speak to the host as the daemon does, with no token", async () => {
    const command = await daemonCommand();
    const daemon = await spawnDaemon(command);
    const { path } = hostSocketPath(stateOf(command), listenOf(command));
    const client = await WireClient.ready(daemon.url);
    const project = scratchDirectory("process-host-project");
    const look = async (processId: string, sandbox: unknown) => {
      await client.call("process/start", { processId, argv: ["bash", "-c", `test -S ${path} && echo visible || echo hidden`], cwd: pathToFileUri(project), env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, tty: false, sandbox });
      await client.closedOf(processId);
      return client.output(processId);
    };
    expect(await look("plain", null)).toBe("visible\n");
    expect(await look("boxed", codexSandbox("workspace-write", project))).toBe("hidden\n");
    client.close();
    await stop(daemon);
  }, 60_000);
});

describe("a client that stops reading", () => {
  it("is dropped when it stops answering pings, though its link waits behind the output it did not read", async () => {
    const command = [...(await daemonCommand()), "--ping-interval-ms", "200", "--ping-timeout-ms", "400", "--max-connections-per-client", "1"];
    const daemon = await spawnDaemon(command);
    const stalled = await WireClient.ready(daemon.url);
    await stalled.call("process/start", { processId: "flood", argv: ["cat", "/dev/zero"], cwd: "/", env: {} });
    stalled.pauseReading();
    // Its one connection slot frees only once the daemon has dropped it: the
    // host's terminate travels on the control link, around the paused data.
    await connectionSlotFrees(daemon.url, 20_000);
    stalled.close();
    await stop(daemon);
  }, 60_000);
});

describe("the connection quota", () => {
  it("counts the connections an earlier daemon handed over: they stay with the host", async () => {
    const command = [...(await daemonCommand()), "--max-connections-per-client", "2"];
    let daemon = await spawnDaemon(command);
    const held = [await WireClient.ready(daemon.url), await WireClient.ready(daemon.url)];
    daemon.child.kill("SIGKILL");
    await daemon.exited;
    daemon = await spawnDaemon(command);
    // Both still speak to the host, and a third connection is one too many for the new daemon as well.
    for (const client of held) expect(await client.call("process/list", {})).toEqual({ processes: [] });
    await expect(WireClient.connect(daemon.url)).rejects.toThrow(/429/);
    held[0]!.close();
    await connectionSlotFrees(daemon.url, 20_000);
    held[1]!.close();
    await stop(daemon);
  }, 60_000);
});

describe("a client's WebSocket through the daemon", () => {
  it("gets its pings answered, and on SIGTERM a close with a code, as from an in-process daemon", async () => {
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

  // The daemon hands the socket over after reading the handshake: whatever the client sent right behind it must reach the host.
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

  it("is let go when the host closes it while it reads nothing, though the close waits behind output", async () => {
    // Pings would drop it anyway: they are out of the way here, so only the host's word over the control link can.
    const command = [...(await daemonCommand()), "--ping-interval-ms", "600000", "--max-connections-per-client", "2"];
    const daemon = await spawnDaemon(command);
    const stalled = await WireClient.connect(daemon.url);
    const { sessionId } = await stalled.call<{ sessionId: string }>("initialize", { clientName: "stalled" });
    stalled.send({ method: "initialized", params: {} });
    await stalled.call("process/start", { processId: "flood", argv: ["cat", "/dev/zero"], cwd: "/", env: {} });
    stalled.pauseReading();
    // Another connection takes the session over: the host closes the first (4001) behind the output it did not read.
    const taker = await WireClient.connect(daemon.url);
    await taker.call("initialize", { clientName: "taker", resumeSessionId: sessionId, takeover: true });
    taker.send({ method: "initialized", params: {} });
    // The taker keeps every message it reads: the flood stops before it fills this process.
    await taker.call("process/terminate", { processId: "flood" });
    // The stalled socket's slot frees only once the daemon has dropped it:
    // after ws's 30 s for a close handshake, as in-process, and the front's
    // 10 s for what is still on its way.
    await connectionSlotFrees(daemon.url, 55_000);
    taker.close();
    stalled.close();
    await stop(daemon);
  }, 90_000);
});

describe("how a daemon and a host agree", () => {
  it("speaks the older of the two newest link versions, and nothing when the ranges do not meet", () => {
    expect(agreedVersion({ linkVersion: 3, minLinkVersion: 1 }, { linkVersion: 2, minLinkVersion: 2 })).toBe(2);
    expect(agreedVersion({ linkVersion: 1, minLinkVersion: 1 }, { linkVersion: 3, minLinkVersion: 2 })).toBeUndefined();
    expect(agreedVersion({ linkVersion: 5, minLinkVersion: 4 }, { linkVersion: 3, minLinkVersion: 1 })).toBeUndefined();
  });

  it("refuses a host whose link versions its own do not meet, names both, and leaves that host running", async () => {
    const command = await daemonCommand();
    mkdirSync(stateOf(command), { recursive: true, mode: 0o700 });
    const { path } = hostSocketPath(stateOf(command), listenOf(command));
    // A host from a future execmux that no longer speaks link version 1.
    const received: { kind: FrameKind; role?: string }[] = [];
    const future = createServer((socket) => {
      const reader = new FrameReader(1 << 20, (kind, payload) => received.push({ kind, role: kind === FrameKind.Hello ? JSON.parse(payload.toString()).role : undefined }));
      socket.on("data", (chunk: Buffer) => reader.push(chunk));
      socket.write(encodeFrame(FrameKind.Hello, JSON.stringify({ role: "host", linkVersion: 9, minLinkVersion: 7, execmuxVersion: "9.0.0", pid: 4242 })));
    });
    await new Promise<void>((resolve) => future.listen(path, resolve));
    const refused = await runCli(["serve", ...command]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("link versions 7-9");
    expect(refused.stderr).toContain("its processes keep running");
    // It said hello and nothing more: a host it cannot speak to is never asked to start a daemon (nor sent its environment).
    expect(received).toEqual([{ kind: FrameKind.Hello, role: "launcher" }]);
    expect(existsSync(path)).toBe(true);
    future.close();
  }, 60_000);

  it("cuts frames out of a stream however it is split, and hands on what follows a link's hello untouched", async () => {
    const messages = Array.from({ length: 50 }, (_, index) => randomBytes(index * 997));
    const stream = Buffer.concat(messages.map((message, index) => encodeFrame(index % 3 === 0 ? FrameKind.Request : FrameKind.Reply, message)));
    const whole: Buffer[] = [];
    const reader = new FrameReader(1 << 20, (_kind, payload) => whole.push(Buffer.from(payload)));
    const randomSplits = (bytes: Buffer) => {
      const parts: Buffer[] = [];
      for (let offset = 0; offset < bytes.length; ) {
        const size = 1 + Math.floor(Math.random() * 3000);
        parts.push(bytes.subarray(offset, offset + size));
        offset += size;
      }
      return parts;
    };
    for (const part of randomSplits(stream)) reader.push(part);
    expect(whole.map(sha256)).toEqual(messages.map(sha256));
    expect(() => new FrameReader(10, () => undefined).push(encodeFrame(FrameKind.Request, "eleven bytes"))).toThrow(/exceeds/);

    // A client's link: its hello, then WebSocket bytes that are not frames of the link's own.
    const after = randomBytes(50_000);
    const link = new PassThrough();
    const first = readFirstFrame(link, 1 << 16);
    for (const part of randomSplits(Buffer.concat([encodeFrame(FrameKind.Hello, '{"role":"client"}'), after]))) link.write(part);
    link.end();
    const { kind, payload, rest } = await first;
    expect(kind).toBe(FrameKind.Hello);
    expect(payload.toString()).toBe('{"role":"client"}');
    const remaining: Buffer[] = [rest];
    for await (const chunk of link) remaining.push(chunk as Buffer);
    expect(sha256(Buffer.concat(remaining))).toBe(sha256(after));
    await expect(readFirstFrame(Readable.from([encodeFrame(FrameKind.Hello, "x".repeat(100))]) as never, 10)).rejects.toThrow(/exceeds/);
});
});
