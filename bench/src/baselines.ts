/**
 * What execmux is compared with in the same run: websocketd (Debian's
 * package, installed here if missing), a bare node-pty read loop and the
 * least Node relay (node-relay.ts).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { freePort } from "./free-port.js";
import { existsSync } from "node:fs";
import net from "node:net";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { ECHO_WARM_UP_TRIPS } from "./stats.js";

export function ensureWebsocketd(): string | undefined {
  const path = "/usr/bin/websocketd";
  if (existsSync(path)) return path;
  try {
    console.error("bench: installing websocketd (apt-get install websocketd) for the baseline...");
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "websocketd"], { stdio: "ignore" });
  } catch {
    try {
      execFileSync("apt-get", ["update"], { stdio: "ignore" });
      execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "websocketd"], { stdio: "ignore" });
    } catch {
      console.error("bench: websocketd is not available; its baselines are skipped");
      return undefined;
    }
  }
  return existsSync(path) ? path : undefined;
}

/** Runs `websocketd --binary COMMAND...` on a free port until stopped. */
export async function startWebsocketd(binary: string, command: string[]): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(binary, [`--port=${port}`, "--address=127.0.0.1", "--binary", "--loglevel=error", ...command], {
    stdio: "ignore",
  });
  const url = `ws://127.0.0.1:${port}/`;
  for (let attempt = 0; attempt < 100; attempt++) {
    const ready = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    url,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Bytes per second websocketd streams a command's stdout to a ws client. */
export async function websocketdThroughput(binary: string, command: string[]): Promise<number> {
  const server = await startWebsocketd(binary, command);
  try {
    const socket = new WebSocket(server.url);
    const started = performance.now();
    let bytes = 0;
    socket.on("message", (data: Buffer) => (bytes += data.length));
    await new Promise((resolve) => socket.once("close", resolve));
    return bytes / ((performance.now() - started) / 1000);
  } finally {
    await server.stop();
  }
}

/** Round-trip times (ms) of one byte through a relay that echoes raw WebSocket frames. */
async function rawEcho(url: string, roundTrips: number): Promise<number[]> {
  const socket = new WebSocket(url);
  await new Promise((resolve) => socket.once("open", resolve));
  const samples: number[] = [];
  for (let trip = 0; trip < ECHO_WARM_UP_TRIPS + roundTrips; trip++) {
    const sent = performance.now();
    const echoed = new Promise((resolve) => socket.once("message", resolve));
    socket.send(Buffer.from("x"));
    await echoed;
    if (trip >= ECHO_WARM_UP_TRIPS) samples.push(performance.now() - sent);
  }
  socket.close();
  return samples;
}

/** Round-trip times (ms) of one byte through websocketd running `cat`. */
export async function websocketdEcho(binary: string, roundTrips: number): Promise<number[]> {
  const server = await startWebsocketd(binary, ["cat"]);
  try {
    return await rawEcho(server.url, roundTrips);
  } finally {
    await server.stop();
  }
}

/** Runs `use` with node-relay.ts started in a process of its own, at the relay's base URL. */
async function withNodeRelay<T>(use: (url: string) => Promise<T>): Promise<T> {
  const relay = spawn(process.execPath, [fileURLToPath(new URL("./node-relay.js", import.meta.url))], { stdio: ["pipe", "pipe", "inherit"] });
  // Listened for from the start: a relay that dies early must fail the measure, not leave the end waiting for an exit already past.
  const exited = new Promise<void>((resolve) => relay.once("exit", () => resolve()));
  try {
    const port = await new Promise<string>((resolve, reject) => {
      createInterface({ input: relay.stdout! }).once("line", resolve);
      relay.once("error", reject);
      relay.once("exit", (code) => reject(new Error(`node-relay exited with ${code}`)));
    });
    return await use(`ws://127.0.0.1:${port}`);
  } finally {
    if (relay.exitCode === null && relay.signalCode === null) relay.kill();
    await exited;
  }
}

/** Round-trip times (ms) of one byte through node-relay.ts's piped `cat`. */
export function nodeRelayEcho(roundTrips: number): Promise<number[]> {
  return withNodeRelay((url) => rawEcho(url, roundTrips));
}

/**
 * What node-pty's own reads lose of a child's last output (node-relay.ts);
 * a stream short by more than this was cut, not measured.
 */
const RELAY_TAIL_SLACK_BYTES = 128 * 1024;

/**
 * Bytes per second of `head -c bytes /dev/zero` on a PTY through
 * node-relay.ts to this process, timed from the socket's opening as the
 * SDK's run is timed from its connection.
 */
export function nodeRelayPtyThroughput(bytes: number): Promise<number> {
  return withNodeRelay(async (url) => {
    const socket = new WebSocket(`${url}/pty?bytes=${bytes}`);
    let started = performance.now();
    let received = 0;
    socket.once("open", () => (started = performance.now()));
    socket.on("message", (data: Buffer) => (received += data.length));
    const code = await new Promise<number>((resolve, reject) => socket.once("close", resolve).once("error", reject));
    const seconds = (performance.now() - started) / 1000;
    if (code !== 1000 || received < bytes - RELAY_TAIL_SLACK_BYTES) throw new Error(`node-relay's PTY stream ended early: ${received} of ${bytes} bytes, close code ${code}`);
    return received / seconds;
  });
}

/** Spawns per second of `/usr/bin/true` from a bare Node process of its own (bare-spawn.ts). */
export function bareSpawnRate(total: number, inFlight: number): number {
  const script = fileURLToPath(new URL("./bare-spawn.js", import.meta.url));
  return Number(execFileSync(process.execPath, [script, String(total), String(inFlight)], { encoding: "utf8" }).trim());
}

/**
 * Milliseconds for the machine itself to end `count` of section 5's bash
 * loops (`loop`, scale.ts), without execmux: a shell starts them, waits
 * until each has said it runs, then SIGTERMs them all at once and waits for
 * each. On a paravirtualized VM tearing down a process costs far more than
 * elsewhere (4,096 of these loops took 5-6 s there), so the daemon's
 * shutdown is held to what it adds. Whatever ends the shell early (the
 * timeout, Ctrl-C) ends the loops too: background jobs of a script ignore
 * SIGINT, and each holds the FIFO it reads open, so none would end alone.
 */
export function bareTeardownMs(count: number, loop: string): number {
  const script = [
    'dir=$(mktemp -d); mkfifo "$dir/in" "$dir/ready"; exec 3<>"$dir/in" 4<>"$dir/ready"; rm -r "$dir"',
    "trap 'kill $(jobs -p) 2>/dev/null' EXIT INT TERM",
    `for i in $(seq ${count}); do bash -c 'echo >&4; exec 4>&-; eval "$LOOP"' <&3 >/dev/null & done`,
    `for i in $(seq ${count}); do read -r -u 4; done`,
    'started=$(date +%s%N); kill -TERM $(jobs -p); wait',
    'echo $(( ($(date +%s%N) - started) / 1000000 ))',
  ].join("\n");
  return Number(execFileSync("bash", ["-c", script], { encoding: "utf8", env: { ...process.env, LOOP: loop }, timeout: 600_000 }).trim());
}

/** Bytes per second of a bare node-pty read loop in this process. */
export async function barePtyThroughput(bytes: number): Promise<number> {
  const require = createRequire(import.meta.url);
  const pty = require("node-pty") as typeof import("node-pty");
  const started = performance.now();
  let received = 0;
  const terminal = pty.spawn("head", ["-c", String(bytes), "/dev/zero"], { encoding: null });
  terminal.onData((data: string | Buffer) => (received += data.length));
  await new Promise((resolve) => terminal.onExit(resolve));
  return received / ((performance.now() - started) / 1000);
}
