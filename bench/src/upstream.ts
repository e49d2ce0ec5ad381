/**
 * Bench section 9: execmux against the peer a user would pick instead, the
 * upstream `codex exec-server` (the pinned @openai/codex), both driven by the
 * same plain upstream-dialect client (plain-client.ts). Each server is a
 * process of its own, started fresh for this section; runs take turns.
 */
import { DaemonProcess } from "./daemon-process.js";
import { NodeFloorServer } from "./node-floor-server.js";
import { connectLatency, plainEcho, plainIdleMemory, plainSpawnRate, plainThroughput, remoteLatency, type RemoteLatency } from "./plain-scenarios.js";
import { percentile, repeatInterleaved, sortNumbers, summarize, type Recorder, type Summary } from "./stats.js";
import { UpstreamServer, upstreamVersion } from "./upstream-server.js";

export interface UpstreamOptions {
  quick: boolean;
  /** Runs per figure (each a median of these, with min and max). */
  runs: number;
  /** Output streamed per throughput run. */
  streamBytes: number;
  /** Timed echo round trips per run for execmux (after stats.ts's warm-up). */
  roundTrips: number;
}

const MiB = 1024 * 1024;
const BASELINE = `codex exec-server ${upstreamVersion}`;
/** Both daemons count closed processes against no limit that this section could reach. */
const DAEMON_ARGS = ["--max-processes-per-session", "1000000", "--max-processes", "1000000"];

/**
 * Section 9's rows. A failure (upstream not installable, output lost) is
 * reported as a FAILED row, as section 5 does, rather than ending the run.
 */
export async function vsUpstream(record: Recorder, options: UpstreamOptions): Promise<void> {
  try {
    await measure(record, options);
  } catch (error) {
    const message = (error as Error).message;
    console.error(`bench: 9. vs upstream FAILED: ${message}`);
    record({ scenario: "9. vs upstream", metric: `FAILED: ${message}`, unit: "", value: single(NaN), met: false });
  }
}

async function measure(record: Recorder, options: UpstreamOptions): Promise<void> {
  const { quick, runs } = options;
  const baseline = (value: Summary) => ({ name: BASELINE, value });
  // Higher is better: ours / theirs. Lower is better: theirs / ours. Either way > 1 is ours ahead.
  const higher = (ours: Summary, theirs: Summary) => ours.median / theirs.median;
  const lower = (ours: Summary, theirs: Summary) => theirs.median / ours.median;

  // Memory first, on fresh servers, as section 6 measures it.
  {
    const count = quick ? 50 : 200;
    const daemon = await DaemonProcess.start(DAEMON_ARGS);
    const ours = await plainIdleMemory(daemon.url, () => daemon.rss(), count).finally(() => daemon.stop());
    const upstream = await UpstreamServer.start();
    const theirs = await plainIdleMemory(upstream.url, () => upstream.rss(), count).finally(() => upstream.stop());
    for (const [metric, key] of [["per idle process", "perProcess"], ["per idle session", "perSession"]] as const) {
      const value = single(ours[key] / 1024);
      const base = single(theirs[key] / 1024);
      record({ scenario: "9. vs upstream: memory", metric, unit: "KiB", value, baseline: baseline(base), ratio: lower(value, base) });
    }
  }

  const daemon = await DaemonProcess.start(DAEMON_ARGS);
  const upstream = await UpstreamServer.start();
  try {
    console.error(`bench: 9. against ${BASELINE} at ${upstream.url}...`);
    // JSON throughput: process/output notifications, base64 chunks, until process/closed.
    const argv = ["head", "-c", String(options.streamBytes), "/dev/zero"];
    const throughput = await repeatInterleaved(runs, {
      ours: async () => (await plainThroughput(daemon.url, argv, options.streamBytes)) / MiB,
      theirs: async () => (await plainThroughput(upstream.url, argv, options.streamBytes)) / MiB,
    });
    const throughputRatio = higher(throughput.ours, throughput.theirs);
    record({
      scenario: "9. vs upstream: throughput, pipe, JSON",
      metric: "plain client",
      unit: "MiB/s",
      value: throughput.ours,
      baseline: baseline(throughput.theirs),
      ratio: throughputRatio,
      target: ">= 1.5 x upstream",
      met: throughputRatio >= 1.5,
    });

    // Echo: upstream's round trip is ~44 ms (see the README), so it gets fewer, shorter runs.
    const echo = { ours: [] as { p50: number; p99: number }[], theirs: [] as { p50: number; p99: number }[] };
    for (let run = 0; run < Math.min(runs, 3); run++) {
      echo.ours.push(await plainEcho(daemon.url, { tty: false, roundTrips: options.roundTrips }));
      echo.theirs.push(await plainEcho(upstream.url, { tty: false, roundTrips: quick ? 50 : 200, warmUpTrips: 10 }));
    }
    for (const metric of ["p50", "p99"] as const) {
      const value = summarize(echo.ours.map((run) => run[metric]));
      const base = summarize(echo.theirs.map((run) => run[metric]));
      record({ scenario: "9. vs upstream: echo, pipe, plain client", metric, unit: "ms", value, baseline: baseline(base), ratio: lower(value, base) });
    }

    // Spawn rate: /usr/bin/true, process/start to process/closed.
    for (const [metric, total, inFlight] of [
      ["sequential", quick ? 30 : 100, 1],
      ["16 in flight", quick ? 100 : 400, 16],
    ] as const) {
      const rate = await repeatInterleaved(runs, {
        ours: () => plainSpawnRate(daemon.url, total, inFlight),
        theirs: () => plainSpawnRate(upstream.url, total, inFlight),
      });
      const ratio = higher(rate.ours, rate.theirs);
      record({ scenario: "9. vs upstream: spawn /usr/bin/true", metric, unit: "/s", value: rate.ours, baseline: baseline(rate.theirs), ratio, target: ">= 1 x upstream", met: ratio >= 1 });
    }

    // Codex's own remote benchmark (examples/remote_latency.rs): 30 iterations after 5 warm-ups, p50 and p95.
    const shape = { iterations: 30, warmUpIterations: 5, connections: quick ? 10 : 30 };
    const latency = { ours: [] as RemoteLatency[], theirs: [] as RemoteLatency[] };
    // Context for the connect row: the least a Node server does for one (node-floor.ts), in the same runs.
    const floorConnect: number[] = [];
    const floor = await NodeFloorServer.start();
    try {
      for (let run = 0; run < runs; run++) {
        latency.ours.push(await remoteLatency(daemon.url, shape));
        latency.theirs.push(await remoteLatency(upstream.url, shape));
        floorConnect.push(percentile(sortNumbers(await connectLatency(floor.url, shape.connections)), 50));
      }
    } finally {
      await floor.stop();
    }
    const phases: [keyof RemoteLatency, string][] = [
      ["connect", "connect + initialize"],
      ["metadata", "fs/getMetadata"],
      ["start", "process/start"],
      ["completion", "process/start -> closed"],
    ];
    for (const [phase, label] of phases) {
      for (const p of [50, 95]) {
        const of = (results: RemoteLatency[]) => summarize(results.map((result) => percentile(sortNumbers([...result[phase]]), p)));
        const value = of(latency.ours);
        const base = of(latency.theirs);
        const ratio = lower(value, base);
        // At least upstream's speed at the median (issue #35); p95 is context.
        const target = p === 50 && phase !== "start" ? { target: ">= 1 x upstream", met: ratio >= 1 } : {};
        record({ scenario: "9. vs upstream: Codex remote benchmark", metric: `${label}, p${p}`, unit: "ms", value, baseline: baseline(base), ratio, ...target });
        if (phase === "connect" && p === 50) {
          const floor = summarize(floorConnect);
          record({ scenario: "9. vs upstream: Codex remote benchmark, bare Node", metric: `${label}, p${p}`, unit: "ms", value: floor, baseline: baseline(base), ratio: lower(floor, base) });
        }
      }
    }
  } finally {
    await upstream.stop();
    await daemon.stop();
  }
}

const single = (value: number): Summary => ({ median: value, min: value, max: value, runs: 1 });
