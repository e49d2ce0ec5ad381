/**
 * Bench section 5: the daemon at its own limit. --max-processes defaults to
 * 4,096 and --max-processes-per-session to 256, so 16 sessions of 256
 * processes each, every one printing a timestamped line every LINE_INTERVAL_S
 * seconds. Reports
 * how late lines reach the client, what a process costs the daemon, the
 * daemon's worst event-loop delay, and how long SIGTERM takes to bring the
 * daemon and every one of its processes down.
 */
import { readFileSync } from "node:fs";
import { connect, type ExecmuxClient, type ProcessHandle } from "@execmux/client";
import type { DaemonProcess } from "./daemon-process.js";
import { percentile, sortNumbers } from "./stats.js";

export interface ScaleOptions {
  readonly sessions: number;
  readonly perSession: number;
  /** Length of the measured window, once every process runs. */
  readonly seconds: number;
}

export interface ScaleResult {
  readonly processes: number;
  readonly lines: number;
  readonly spawnSeconds: number;
  readonly deliveryP50Ms: number;
  readonly deliveryP99Ms: number;
  readonly peakRssBytes: number;
  /** RSS with every process running, less the RSS before the first was started, per process. */
  readonly rssPerProcessBytes: number;
  readonly eventLoopMaxMs: number;
  readonly cpuShare: number;
}

export interface ShutdownResult {
  /** SIGTERM until the daemon has exited and none of its processes is left. */
  readonly shutdownMs: number;
  /** SIGTERM until the daemon's exit. */
  readonly daemonExitMs: number;
  /** Processes still there when the wait gave up, the daemon among them if it had not exited (0: all gone). */
  readonly processesLeft: number;
}

/**
 * How often each process prints its line: 4,096 of them bring 1,024 lines a
 * second, the rate of issue #4's 1,000 processes printing once a second.
 * Each line is a wake-up of a process of its own, and what that costs is the
 * machine's: on the 2-core paravirtualized AMD EPYC VMs, 2,000 such bash
 * loops printing every second took 1.9 cores with no execmux at all (4,096
 * of them at every 4 s, 0.6), so at one line a second the machine, not the
 * daemon, decided the delivery delay.
 */
const LINE_INTERVAL_S = 4;
/** What each process runs. */
export const SCALE_LOOP = `while :; do echo $EPOCHREALTIME; read -t ${LINE_INTERVAL_S}; done`;
/** A second of quiet after the last start: the start burst's backlog is not what is measured. */
const SETTLE_MS = 1000;
/** How long the shutdown is waited for before the processes still there are reported. */
const SHUTDOWN_WAIT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Wall clock with sub-millisecond resolution, like bash's $EPOCHREALTIME. */
const nowSeconds = () => (performance.timeOrigin + performance.now()) / 1000;

/** The clients and pids of a scale run, for the shutdown that follows it. */
export interface ScaleFleet {
  readonly clients: ExecmuxClient[];
  readonly pids: number[];
}

/** Starts the fleet, measures the window, and leaves everything running for `shutdown`. */
export async function scaleToLimit(daemon: DaemonProcess, options: ScaleOptions): Promise<ScaleResult & { fleet: ScaleFleet }> {
  const rssBefore = daemon.rss();
  const clients = await Promise.all(Array.from({ length: options.sessions }, () => connect(daemon.url, { reconnect: false })));
  const delays: number[] = [];
  let measuring = false;
  const onLine = (event: { data: Uint8Array }) => {
    if (!measuring) return;
    const now = nowSeconds();
    for (const line of Buffer.from(event.data).toString().trim().split("\n")) delays.push((now - Number(line)) * 1000);
  };
  const spawnStarted = performance.now();
  // One start at a time per session, the sessions in parallel: as 16 agents would.
  const handles = (
    await Promise.all(
      clients.map(async (client) => {
        const started: ProcessHandle[] = [];
        for (let index = 0; index < options.perSession; index++) {
          const handle = await client.start({ argv: ["bash", "-c", SCALE_LOOP], pipeStdin: true });
          handle.onOutput(onLine);
          started.push(handle);
        }
        return started;
      }),
    )
  ).flat();
  const spawnSeconds = (performance.now() - spawnStarted) / 1000;
  await sleep(SETTLE_MS);
  const rssRunning = daemon.rss();

  await daemon.metric("nodejs_eventloop_lag_max_seconds"); // a scrape resets the lag histogram
  measuring = true;
  const cpuBefore = daemon.cpuSeconds();
  const windowStarted = performance.now();
  let peakRssBytes = rssRunning;
  while (performance.now() - windowStarted < options.seconds * 1000) {
    peakRssBytes = Math.max(peakRssBytes, daemon.rss());
    await sleep(250);
  }
  const cpuShare = (daemon.cpuSeconds() - cpuBefore) / ((performance.now() - windowStarted) / 1000);
  // Lines are no longer timed before the scrape: the bench's own request is not the delivery being measured.
  measuring = false;
  const eventLoopMaxMs = (await daemon.metric("nodejs_eventloop_lag_max_seconds")) * 1000;

  const pids = (await Promise.all(clients.map((client) => client.list())))
    .flat()
    .map((info) => info.pid)
    .filter((pid): pid is number => typeof pid === "number");
  sortNumbers(delays);
  return {
    processes: handles.length,
    lines: delays.length,
    spawnSeconds,
    deliveryP50Ms: percentile(delays, 50),
    deliveryP99Ms: percentile(delays, 99),
    peakRssBytes,
    rssPerProcessBytes: (rssRunning - rssBefore) / handles.length,
    eventLoopMaxMs,
    cpuShare,
    fleet: { clients, pids },
  };
}

/**
 * SIGTERM to the daemon with the fleet running: the time until the daemon
 * has exited and no process it started is left (a zombie counts as gone:
 * it is dead, and init reaps it once the daemon is). The daemon's exit is
 * awaited, not polled, and the pids are looked at only after it: scanning
 * 4,096 /proc entries every few ms would take the CPU the shutdown needs.
 * The daemon is gone afterwards; the caller starts another.
 */
export async function shutdown(daemon: DaemonProcess, fleet: ScaleFleet): Promise<ShutdownResult> {
  const started = performance.now();
  const exited = new Promise<number>((resolve) => daemon.child.once("exit", () => resolve(performance.now() - started)));
  daemon.child.kill("SIGTERM");
  const daemonExitMs = await Promise.race([exited, sleep(SHUTDOWN_WAIT_MS).then(() => Number.NaN)]);
  let left = fleet.pids.filter(isRunning);
  while (left.length > 0 && performance.now() - started < SHUTDOWN_WAIT_MS) {
    await sleep(10);
    left = left.filter(isRunning);
  }
  const shutdownMs = performance.now() - started;
  for (const client of fleet.clients) client.close();
  return { shutdownMs, daemonExitMs, processesLeft: left.length + (Number.isNaN(daemonExitMs) ? 1 : 0) };
}

/** True while the pid exists and is not a zombie. */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
