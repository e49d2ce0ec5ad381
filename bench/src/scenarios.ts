/** Each bench scenario, against the real daemon (a separate process) and the real SDK. */
import { connect, type ExecmuxClient, type ProcessHandle } from "@execmux/client";
import WebSocket from "ws";
import { DaemonProcess } from "./daemon-process.js";
import { Relay } from "./relay.js";
import { ECHO_WARM_UP_TRIPS, percentile, ratePerSecond, sortNumbers } from "./stats.js";

const MiB = 1024 * 1024;

/** Output bytes per second of `argv` streamed to the SDK. */
export async function sdkThroughput(url: string, argv: string[], options: { tty: boolean; binaryOutput: boolean }): Promise<number> {
  const client = await connect(url, { binaryOutput: options.binaryOutput });
  try {
    const started = performance.now();
    const handle = await client.start({ argv, tty: options.tty });
    let bytes = 0;
    handle.onOutput((event) => (bytes += event.data.length));
    await handle.wait();
    return bytes / ((performance.now() - started) / 1000);
  } finally {
    client.close();
  }
}

/**
 * `sdkThroughput` in binary mode while another connection observes the
 * session (initialize observeSessionId) and reads nothing at all: its
 * socket is paused from the start. An observer never pauses a process, so
 * the owner's stream should go as fast as without one (docs/sessions.md).
 */
export async function throughputWithStalledObserver(url: string, argv: string[]): Promise<number> {
  const client = await connect(url, { binaryOutput: true });
  const observer = new WebSocket(url);
  try {
    await new Promise((resolve, reject) => {
      observer.once("open", resolve);
      observer.once("error", reject);
    });
    const replied = new Promise<void>((resolve) => observer.once("message", () => resolve()));
    observer.send(JSON.stringify({ id: 1, method: "initialize", params: { clientName: "stalled observer", observeSessionId: client.sessionId, binaryOutput: true } }));
    await replied;
    observer.send(JSON.stringify({ method: "initialized" }));
    (observer as unknown as { _socket: { pause(): void } })._socket.pause();
    const started = performance.now();
    const handle = await client.start({ argv });
    let bytes = 0;
    handle.onOutput((event) => (bytes += event.data.length));
    await handle.wait();
    return bytes / ((performance.now() - started) / 1000);
  } finally {
    observer.terminate();
    client.close();
  }
}

/**
 * One byte written, the same byte seen back: the round trip in ms, ending
 * at the echo, which is what a person typing sees (and all websocketd and
 * the plain client's trips measure). It returns once the write's reply came
 * too, as a client that awaits its calls goes on: while the daemon polls
 * after input, that reply follows the echo (rpc/poll-after-input.ts).
 */
export async function echoOnce(handle: ProcessHandle): Promise<number> {
  const sent = performance.now();
  let roundTrip = 0;
  const echoed = new Promise<void>((resolve) => {
    const off = handle.onOutput(() => {
      off();
      roundTrip = performance.now() - sent;
      resolve();
    });
  });
  await Promise.all([handle.write("x"), echoed]);
  return roundTrip;
}

/** Round-trip times in ms, after a warm-up. */
async function echoRoundTrips(handle: ProcessHandle, roundTrips: number): Promise<number[]> {
  const samples: number[] = [];
  for (let trip = 0; trip < ECHO_WARM_UP_TRIPS + roundTrips; trip++) {
    const roundTrip = await echoOnce(handle);
    if (trip >= ECHO_WARM_UP_TRIPS) samples.push(roundTrip);
  }
  return samples;
}

/**
 * Echo latency through `cat` (pipe) or a PTY's echo, optionally while another
 * process floods the socket (`acks: false`: without credit flow control);
 * with a flood, also the flood's throughput meanwhile (MiB/s).
 */
export async function echoLatency(
  url: string,
  options: { tty: boolean; flood: boolean; roundTrips: number; acks?: boolean },
): Promise<{ p50: number; p99: number; floodMiBps: number | undefined }> {
  const client = await connect(url, options.acks === false ? { ackWindowBytes: false } : {});
  try {
    const flood = options.flood ? await client.start({ argv: ["cat", "/dev/zero"] }) : undefined;
    let floodBytes = 0;
    flood?.onOutput((event) => (floodBytes += event.data.length));
    const echo = await client.start({ argv: ["cat"], tty: options.tty, pipeStdin: !options.tty });
    const started = performance.now();
    const floodBytesBefore = floodBytes;
    const samples = sortNumbers(await echoRoundTrips(echo, options.roundTrips));
    const floodMiBps = flood ? (floodBytes - floodBytesBefore) / MiB / ((performance.now() - started) / 1000) : undefined;
    await flood?.terminate();
    await echo.terminate();
    return { p50: percentile(samples, 50), p99: percentile(samples, 99), floodMiBps };
  } finally {
    client.close();
  }
}

/** Processes per second, start to closed, of `true`: one at a time or `inFlight` at once. */
export async function spawnRate(client: ExecmuxClient, total: number, inFlight: number): Promise<number> {
  return ratePerSecond(total, inFlight, async () => (await client.start({ argv: ["true"] })).wait());
}

/**
 * Fills the daemon with `megabytes` MiB of retained output: processes each
 * print 1 MiB into a session whose socket closed at once, so the output is
 * retained rather than sent. Returns when every one of them has closed.
 */
export async function retainOutput(daemon: DaemonProcess, megabytes: number): Promise<void> {
  const open = async () => {
    const socket = new WebSocket(daemon.url);
    await new Promise((resolve) => socket.once("open", resolve));
    const replies = new Map<number, (result: unknown) => void>();
    socket.on("message", (data, isBinary) => {
      if (isBinary) return;
      const message = JSON.parse(data.toString()) as { id?: number; result?: unknown };
      if (message.id !== undefined) replies.get(message.id)?.(message.result);
    });
    let nextId = 0;
    const call = (method: string, params: unknown) =>
      new Promise<any>((resolve) => {
        const id = nextId++;
        replies.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      });
    return { socket, call };
  };
  const first = await open();
  const { sessionId } = await first.call("initialize", { clientName: "bench-retain" });
  first.socket.send(JSON.stringify({ method: "initialized" }));
  await Promise.all(
    Array.from({ length: megabytes }, (_, index) =>
      first.call("process/start", { processId: `r${index}`, argv: ["head", "-c", String(MiB), "/dev/urandom"], cwd: "/", env: { PATH: "/usr/bin:/bin" } }),
    ),
  );
  // Leave: the session detaches and keeps everything.
  first.socket.terminate();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const probe = await open();
    const resumed = await probe.call("initialize", { clientName: "bench-probe", resumeSessionId: sessionId });
    if (!resumed) throw new Error("the retaining session was lost; raise --session-ttl-ms");
    probe.socket.send(JSON.stringify({ method: "initialized" }));
    const { processes } = await probe.call("process/list", {});
    probe.socket.terminate();
    if ((processes as { state: string }[]).every((entry) => entry.state === "closed")) return;
  }
}

/** Daemon memory per idle process and per idle session (RSS delta / count). */
export async function idleMemory(daemon: DaemonProcess, count: number) {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));
  await settle();
  const before = daemon.rss();
  const client = await connect(daemon.url);
  const handles = await Promise.all(Array.from({ length: count }, () => client.start({ argv: ["sleep", "600"] })));
  await settle();
  const perProcess = (daemon.rss() - before) / count;
  await Promise.all(handles.map((handle) => handle.terminate()));
  client.close();

  await settle();
  const beforeSessions = daemon.rss();
  const sessions = await Promise.all(Array.from({ length: count }, () => connect(daemon.url)));
  await settle();
  const perSession = (daemon.rss() - beforeSessions) / count;
  for (const session of sessions) session.close();
  return { perProcess, perSession };
}

/**
 * Cut the socket while a process prints every few ms; time until the first
 * line printed after the cut reaches the application (reconnect + resume + replay).
 */
export async function resumeLatency(daemon: DaemonProcess, cycles: number): Promise<number[]> {
  const relay = await Relay.start(daemon.url);
  const client = await connect(relay.url, { reconnect: { initialDelayMs: 0, jitter: 0 } });
  const ticker = await client.start({ argv: ["bash", "-c", "while :; do echo $EPOCHREALTIME; read -t 0.005; done"], pipeStdin: true });
  const samples: number[] = [];
  const nowSeconds = () => (performance.timeOrigin + performance.now()) / 1000;
  for (let cycle = 0; cycle < cycles; cycle++) {
    const cutAt = nowSeconds();
    const live = new Promise<void>((resolve) => {
      const off = ticker.onOutput((event) => {
        const stamps = Buffer.from(event.data).toString().trim().split("\n").map(Number);
        if (stamps.some((stamp) => stamp > cutAt)) {
          off();
          resolve();
        }
      });
    });
    relay.cutAll();
    await live;
    samples.push((nowSeconds() - cutAt) * 1000);
  }
  await ticker.terminate();
  client.close();
  await relay.close();
  return samples;
}

/** With `processes` processes in the session: time from the cut until the session is resumed. */
export async function resumeCost(daemon: DaemonProcess, processes: number, cycles: number): Promise<number[]> {
  const relay = await Relay.start(daemon.url);
  const client = await connect(relay.url, { reconnect: { initialDelayMs: 0, jitter: 0 } });
  const handles = await Promise.all(Array.from({ length: processes }, () => client.start({ argv: ["cat"], pipeStdin: true })));
  const samples: number[] = [];
  for (let cycle = 0; cycle < cycles; cycle++) {
    const resumed = new Promise<void>((resolve) => {
      const off = client.on("resumed", () => {
        off();
        resolve();
      });
    });
    const cut = performance.now();
    relay.cutAll();
    await resumed;
    samples.push(performance.now() - cut);
  }
  await Promise.all(handles.map((handle) => handle.terminate()));
  client.close();
  await relay.close();
  return samples;
}
