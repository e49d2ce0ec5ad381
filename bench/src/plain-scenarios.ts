/**
 * Bench scenarios driven by the plain upstream-dialect client
 * (plain-client.ts), so that one code path measures execmux and the
 * upstream `codex exec-server` alike.
 */
import { PlainClient } from "./plain-client.js";
import { ECHO_WARM_UP_TRIPS, percentile, sortNumbers } from "./stats.js";

/** Output bytes per second of `argv` (pipe), from `process/output` notifications until `process/closed`, as Codex's client reads them. */
export async function plainThroughput(url: string, argv: string[], expectedBytes: number): Promise<number> {
  const client = await PlainClient.connect(url);
  try {
    let bytes = 0;
    const started = performance.now();
    await client.run({ argv, cwd: client.cwd }, (count) => (bytes += count));
    const seconds = (performance.now() - started) / 1000;
    // Notifications are best-effort upstream: a figure made of dropped output would flatter it.
    if (bytes !== expectedBytes) throw new Error(`expected ${expectedBytes} bytes of output, got ${bytes}`);
    return bytes / seconds;
  } finally {
    client.close();
  }
}

/**
 * One byte written with `process/write`, seen back in a `process/output`
 * notification (through `cat` on a pipe, or the PTY's echo): round trips in
 * ms after a warm-up. A trip ends at the echo; the next one waits for the
 * write's reply too, as a client that awaits its calls does.
 */
export async function plainEcho(url: string, options: { tty: boolean; roundTrips: number; warmUpTrips?: number }): Promise<{ p50: number; p99: number }> {
  const client = await PlainClient.connect(url);
  try {
    let echoed: () => void = () => {};
    const processId = await client.start({ argv: ["cat"], cwd: client.cwd, tty: options.tty, pipeStdin: !options.tty }, { onOutput: () => echoed() });
    const samples: number[] = [];
    const warmUp = options.warmUpTrips ?? ECHO_WARM_UP_TRIPS;
    for (let trip = 0; trip < warmUp + options.roundTrips; trip++) {
      const sent = performance.now();
      let roundTrip = 0;
      const seen = new Promise<void>((resolve) => {
        echoed = () => {
          echoed = () => {};
          roundTrip = performance.now() - sent;
          resolve();
        };
      });
      await Promise.all([client.write(processId, "x"), seen]);
      if (trip >= warmUp) samples.push(roundTrip);
    }
    await client.terminate(processId);
    sortNumbers(samples);
    return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
  } finally {
    client.close();
  }
}

/** Processes per second of `/usr/bin/true`, `process/start` to `process/closed`: one at a time or `inFlight` at once. */
export async function plainSpawnRate(url: string, total: number, inFlight: number): Promise<number> {
  const client = await PlainClient.connect(url);
  try {
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      while (next < total) {
        next++;
        await client.run({ argv: ["/usr/bin/true"], cwd: client.cwd });
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    return total / ((performance.now() - started) / 1000);
  } finally {
    client.close();
  }
}

/** Server memory per idle process (`sleep 600`) and per idle session (a connection after its handshake): RSS delta / count. */
export async function plainIdleMemory(url: string, rss: () => number, count: number): Promise<{ perProcess: number; perSession: number }> {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));
  await settle();
  const before = rss();
  const client = await PlainClient.connect(url);
  const processIds = await Promise.all(Array.from({ length: count }, () => client.start({ argv: ["sleep", "600"], cwd: client.cwd })));
  await settle();
  const perProcess = (rss() - before) / count;
  await Promise.all(processIds.map((processId) => client.terminate(processId)));
  client.close();

  await settle();
  const beforeSessions = rss();
  const sessions = await Promise.all(Array.from({ length: count }, () => PlainClient.connect(url)));
  await settle();
  const perSession = (rss() - beforeSessions) / count;
  for (const session of sessions) session.close();
  return { perProcess, perSession };
}

export interface RemoteLatency {
  /** ms, one sample per fresh connection: socket open through `initialize`'s reply and `initialized`. */
  connect: number[];
  /** ms per call: `fs/getMetadata` of the server's cwd. */
  metadata: number[];
  /** ms: `process/start` of /usr/bin/true until its reply. */
  start: number[];
  /** ms: `process/start` sent until `process/closed` arrives. */
  completion: number[];
}

/** ms per fresh connection, one after another: socket open through `initialize`'s reply and `initialized`. */
export async function connectLatency(url: string, connections: number): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < connections; index++) {
    const started = performance.now();
    const client = await PlainClient.connect(url, "codex-environment");
    samples.push(performance.now() - started);
    client.close();
  }
  return samples;
}

/**
 * The shape of Codex's own remote benchmark (codex-rs/exec-server/examples/
 * remote_latency.rs): connect, then per iteration `fs/getMetadata` of the
 * environment's cwd and a `process/start` of /usr/bin/true (env {}, no
 * envPolicy, no tty, no sandbox) waited on through its events until closed;
 * 5 warm-up iterations, then the measured ones. Its single connection time
 * becomes `connections` samples here, so it has a p95 too.
 */
export async function remoteLatency(url: string, options: { iterations: number; warmUpIterations: number; connections: number }): Promise<RemoteLatency> {
  const connect = await connectLatency(url, options.connections);
  const client = await PlainClient.connect(url, "codex-environment");
  const result: RemoteLatency = { connect, metadata: [], start: [], completion: [] };
  try {
    for (let iteration = 0; iteration < options.warmUpIterations + options.iterations; iteration++) {
      const measured = iteration >= options.warmUpIterations;
      let started = performance.now();
      await client.call("fs/getMetadata", { path: client.cwd, sandbox: null });
      if (measured) result.metadata.push(performance.now() - started);

      started = performance.now();
      let closed!: () => void;
      const done = new Promise<void>((resolve) => (closed = resolve));
      const processId = await client.start({ argv: ["/usr/bin/true"], cwd: client.cwd, env: {} }, { onClosed: () => closed() });
      const startMs = performance.now() - started;
      await done;
      if (measured) {
        result.start.push(startMs);
        result.completion.push(performance.now() - started);
      }
      client.forget(processId);
    }
    return result;
  } finally {
    client.close();
  }
}
