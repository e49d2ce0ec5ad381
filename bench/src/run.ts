/**
 * `npm run bench`: every scenario against the real daemon and SDK, each
 * figure a median of several runs (with min and max), speeds also as a ratio
 * to a baseline measured in the same run. Prints a table and writes
 * bench/results/bench-<time>.json. `npm run bench -- --quick` runs smaller sizes;
 * `--attack TEXT` runs only section 8's attacks whose name contains TEXT.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@execmux/client";
import { adversarial } from "./adversarial.js";
import { barePtyThroughput, bareSpawnRate, bareTeardownMs, ensureWebsocketd, nodeRelayEcho, nodeRelayPtyThroughput, websocketdEcho, websocketdThroughput } from "./baselines.js";
import { DaemonProcess } from "./daemon-process.js";
import { describeMachine, type Machine } from "./machine.js";
import { plainEcho } from "./plain-scenarios.js";
import { SCALE_LOOP, scaleToLimit, shutdown } from "./scale.js";
import * as scenario from "./scenarios.js";
import { percentile, repeat, repeatInterleaved, sortNumbers, summarize, type Row, type Summary } from "./stats.js";
import { upstreamVersion } from "./upstream-server.js";
import { vsUpstream } from "./upstream.js";
import { cpuHog, measureServer } from "./resting-cost.js";

const quick = process.argv.includes("--quick");
/** `--only 1,5` runs just those sections (numbered as in the table). */
const onlyIndex = process.argv.indexOf("--only");
const only = onlyIndex >= 0 ? new Set((process.argv[onlyIndex + 1] ?? "").split(",").map(Number)) : undefined;
const wanted = (section: number) => !only || only.has(section);
const RUNS = quick ? 2 : 5;
const MiB = 1024 * 1024;
const STREAM_BYTES = (quick ? 32 : 256) * MiB;
const ROUND_TRIPS = quick ? 300 : 2000;
/**
 * Spawns with 16 in flight, against a bare Node process spawning the same
 * way on the same machine: a ratio, not a number that holds on one machine
 * only (a paravirtualized AMD EPYC VM spawns at about 100-110/s even bare).
 * Issue #35 asks for twice the bare process's rate, set where Node's fork
 * was most of a spawn's cost. The bare process spawns with stdio ignored,
 * execmux's children get pipes.
 */
const SPAWN_VS_BARE = 2;

/** Section 8: a bystander's echo beside any one attack (issues #22 and #34). */
const BYSTANDER_P99_MS = 10;

const rows: Row[] = [];

function record(row: Row): void {
  rows.push(row);
  const base = row.baseline ? `  vs ${row.baseline.name} ${fmt(row.baseline.value.median)}` : "";
  const ratio = row.ratio !== undefined ? `  ratio ${row.ratio.toFixed(2)}` : "";
  console.error(`bench: ${row.scenario} / ${row.metric}: ${fmt(row.value.median)} ${row.unit}${base}${ratio}`);
}

type EchoRun = Awaited<ReturnType<typeof scenario.echoLatency>>;

/** Section 3's rows for one setting: p50 (against websocketd's when given), p99, and the flood's rate if there was one. */
function recordEcho(name: string, runs: EchoRun[], options: { baseline?: Summary | undefined; p99Below?: number; p50?: boolean }): void {
  const p50 = summarize(runs.map((run) => run.p50));
  const p99 = summarize(runs.map((run) => run.p99));
  const { baseline } = options;
  if (baseline) {
    const ratio = p50.median / baseline.median;
    record({ scenario: name, metric: "p50", unit: "ms", value: p50, baseline: { name: "websocketd cat", value: baseline }, ratio, target: "<= 1.2 x websocketd", met: ratio <= 1.2 });
  } else if (options.p50 !== false) {
    record({ scenario: name, metric: "p50", unit: "ms", value: p50 });
  }
  const limit = options.p99Below;
  record({ scenario: name, metric: "p99", unit: "ms", value: p99, ...(limit !== undefined ? { target: `< ${limit} ms`, met: p99.median < limit } : {}) });
  if (runs.some((run) => run.floodMiBps !== undefined)) {
    record({ scenario: name, metric: "flood's throughput meanwhile", unit: "MiB/s", value: summarize(runs.map((run) => run.floodMiBps ?? NaN)) });
  }
}

const fmt = (value: number) => (Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 1 ? value.toFixed(2) : value.toFixed(3));
const mibps = (bytesPerSecond: number) => bytesPerSecond / MiB;
const single = (value: number): Summary => ({ median: value, min: value, max: value, runs: 1 });

async function main(): Promise<void> {
  // Only sections 1 and 3 compare with websocketd (installed on first use).
  const websocketd = wanted(1) || wanted(3) ? ensureWebsocketd() : undefined;
  const headArgs = ["head", "-c", String(STREAM_BYTES), "/dev/zero"];
  // Long TTL and retention: section 4 keeps a detached session full of output.
  let daemon = await DaemonProcess.start([
    "--session-ttl-ms", "3600000",
    "--closed-retention-ms", "3600000",
    "--max-processes-per-session", "1000000",
    "--max-processes", "1000000",
  ]);

  // 1. Pipe throughput, runs interleaved with the baseline's.
  if (wanted(1)) {
    const ours = (binaryOutput: boolean) => async () => mibps(await scenario.sdkThroughput(daemon.url, headArgs, { tty: false, binaryOutput }));
    const measured = await repeatInterleaved(RUNS, {
      binary: ours(true),
      json: ours(false),
      observed: async () => mibps(await scenario.throughputWithStalledObserver(daemon.url, headArgs)),
      ...(websocketd ? { websocketd: async () => mibps(await websocketdThroughput(websocketd, headArgs)) } : {}),
    });
    const wsd = "websocketd" in measured ? measured.websocketd : undefined;
    for (const binaryOutput of [true, false]) {
      const value = binaryOutput ? measured.binary : measured.json;
      const ratio = wsd ? value.median / wsd.median : undefined;
      const need = binaryOutput ? 1.0 : 0.4;
      record({
        scenario: "1. throughput, pipe",
        metric: binaryOutput ? "binary mode" : "JSON mode",
        unit: "MiB/s",
        value,
        ...(wsd ? { baseline: { name: "websocketd --binary", value: wsd } } : {}),
        ...(ratio !== undefined ? { ratio, met: ratio >= need } : {}),
        target: `>= ${need} x websocketd`,
      });
    }
    // A slow observer never slows the owner: the same stream while an observer of the session reads nothing.
    const alone = measured.binary;
    const observedRatio = measured.observed.median / alone.median;
    record({
      scenario: "1. throughput, pipe, a stalled observer watching",
      metric: "binary mode",
      unit: "MiB/s",
      value: measured.observed,
      baseline: { name: "no observer", value: alone },
      ratio: observedRatio,
      target: ">= 0.9 x no observer",
      met: observedRatio >= 0.9,
    });
  }
  // 2. PTY throughput.
  if (wanted(2)) {
    const { bare, relay, pty } = await repeatInterleaved(RUNS, {
      bare: async () => mibps(await barePtyThroughput(STREAM_BYTES)),
      relay: async () => mibps(await nodeRelayPtyThroughput(STREAM_BYTES)),
      pty: async () => mibps(await scenario.sdkThroughput(daemon.url, headArgs, { tty: true, binaryOutput: true })),
    });
    // The target: the same stream through the least Node relay (node-relay.ts: node-pty's onData over ws to a client process).
    record({ scenario: "2. throughput, PTY", metric: "binary mode", unit: "MiB/s", value: pty, baseline: { name: "node-pty + ws relay", value: relay }, ratio: pty.median / relay.median, target: ">= 1.2 x least Node relay", met: pty.median / relay.median >= 1.2 });
    // Context, not a target: a bare node-pty read loop has neither the socket nor the client process.
    record({ scenario: "2. throughput, PTY, vs bare node-pty loop", metric: "binary mode", unit: "MiB/s", value: pty, baseline: { name: "bare node-pty loop", value: bare }, ratio: pty.median / bare.median });
  }
  // 3. Echo latency.
  if (wanted(3)) {
    const runs = Math.min(RUNS, 3);
    const echo = (url: string, tty: boolean, flood: boolean, acks = true) => scenario.echoLatency(url, { tty, flood, roundTrips: ROUND_TRIPS, acks });
    const p50Of = (samples: number[]) => percentile(sortNumbers(samples), 50);
    // Without a flood, our runs take turns with the baselines'.
    const wsd: number[] = [];
    const relay: number[] = [];
    const quiet = { pipe: [] as EchoRun[], pty: [] as EchoRun[] };
    // What polling after input is worth: the same on a daemon without it.
    const unpolledDaemon = await DaemonProcess.start(["--poll-after-input-micros", "0"]);
    const unpolled = { pipe: [] as EchoRun[], pty: [] as EchoRun[] };
    // The same echo from a plain upstream-dialect client (JSON frames, no extensions).
    const plain = { pipe: [] as EchoRun[], pty: [] as EchoRun[] };
    for (let run = 0; run < runs; run++) {
      if (websocketd) wsd.push(p50Of(await websocketdEcho(websocketd, ROUND_TRIPS)));
      relay.push(p50Of(await nodeRelayEcho(ROUND_TRIPS)));
      for (const tty of [false, true]) {
        const kind = tty ? "pty" : "pipe";
        quiet[kind].push(await echo(daemon.url, tty, false));
        unpolled[kind].push(await echo(unpolledDaemon.url, tty, false));
        plain[kind].push({ ...(await plainEcho(daemon.url, { tty, roundTrips: ROUND_TRIPS })), floodMiBps: undefined });
      }
    }
    await unpolledDaemon.stop();
    const flooded = async (tty: boolean, acks = true) => {
      const results: EchoRun[] = [];
      for (let run = 0; run < runs; run++) results.push(await echo(daemon.url, tty, true, acks));
      return results;
    };
    // Context, not a target: what Node and ws alone cost (see node-relay.ts).
    record({ scenario: "3. echo, pipe, bare Node relay", metric: "p50", unit: "ms", value: summarize(relay) });
    const baseline = wsd.length > 0 ? summarize(wsd) : undefined;
    recordEcho("3. echo, pipe", quiet.pipe, { baseline, p99Below: 2 });
    recordEcho("3. echo, pipe, plain client", plain.pipe, { baseline, p99Below: 2 });
    recordEcho("3. echo, pipe, other process flooding", await flooded(false), { p99Below: 10 });
    recordEcho("3. echo, pipe, poll after input off", unpolled.pipe, {});
    recordEcho("3. echo, PTY", quiet.pty, { baseline, p99Below: 2 });
    recordEcho("3. echo, PTY, plain client", plain.pty, { baseline, p99Below: 2 });
    recordEcho("3. echo, PTY, poll after input off", unpolled.pty, {});
    recordEcho("3. echo, PTY, other process flooding", await flooded(true), { p99Below: 10 });
    // Why the SDK acks by default: the same flood with credit flow control off.
    recordEcho("3. echo, pipe, other process flooding, acks off", await flooded(false, false), { p50: false });
  }
  // 5. Scale, at the daemon's own limit: --max-processes (4,096 by default)
  // over 16 sessions of --max-processes-per-session (256), then SIGTERM with
  // all of them running. A failure is reported in the table rather than ending the run.
  if (wanted(5)) {
    const SCALE_SESSIONS = 16;
    const SCALE_PER_SESSION = 256;
    const SCALE_KILL_GRACE_MS = 2000;
    await daemon.stop();
    const name = `5. scale, ${SCALE_SESSIONS * SCALE_PER_SESSION} processes`;
    try {
      console.error("bench: 5. the machine ending the same processes without execmux...");
      const bareTeardown = single(bareTeardownMs(SCALE_SESSIONS * SCALE_PER_SESSION, SCALE_LOOP) / 1000);
      daemon = await DaemonProcess.start(["--kill-grace-ms", String(SCALE_KILL_GRACE_MS)]);
      const scaled = await scaleToLimit(daemon, { sessions: SCALE_SESSIONS, perSession: SCALE_PER_SESSION, seconds: quick ? 3 : 10 });
      if (scaled.processes !== SCALE_SESSIONS * SCALE_PER_SESSION) throw new Error(`only ${scaled.processes} processes started`);
      record({ scenario: name, metric: "delivery delay p99", unit: "ms", value: single(scaled.deliveryP99Ms), target: "< 50 ms", met: scaled.deliveryP99Ms < 50 });
      record({ scenario: name, metric: "delivery delay p50", unit: "ms", value: single(scaled.deliveryP50Ms) });
      record({ scenario: name, metric: "event-loop delay, worst", unit: "ms", value: single(scaled.eventLoopMaxMs) });
      record({ scenario: name, metric: "daemon RSS per process", unit: "KiB", value: single(scaled.rssPerProcessBytes / 1024) });
      record({ scenario: name, metric: "daemon RSS (peak)", unit: "MiB", value: single(scaled.peakRssBytes / MiB) });
      record({ scenario: name, metric: "daemon CPU", unit: "% of a core", value: single(scaled.cpuShare * 100) });
      record({ scenario: name, metric: "time to start them all", unit: "s", value: single(scaled.spawnSeconds) });
      // The machine's own teardown is not the daemon's to shorten: the daemon may add the kill grace to it.
      const limitS = bareTeardown.median + SCALE_KILL_GRACE_MS / 1000;
      const down = await shutdown(daemon, scaled.fleet);
      const met = down.processesLeft === 0 && down.shutdownMs / 1000 < limitS;
      const value = single(down.processesLeft === 0 ? down.shutdownMs / 1000 : NaN);
      record({
        scenario: name,
        metric: "SIGTERM -> daemon and every process gone",
        unit: "s",
        value,
        baseline: { name: "bare shell's SIGTERM to all gone", value: bareTeardown },
        target: `< bare + kill grace (${fmt(limitS)} s)`,
        met,
      });
      if (down.processesLeft > 0) console.error(`bench: 5. scale: ${down.processesLeft} processes left after SIGTERM`);
    } catch (error) {
      console.error(`bench: 5. scale FAILED: ${(error as Error).message}`);
      record({ scenario: "5. scale", metric: `FAILED: ${(error as Error).message}`, unit: "", value: single(NaN), met: false });
      await daemon.stop();
    }
    // Section 5 ends with its daemon shut down (or failed): the next sections get a fresh one.
    daemon = await DaemonProcess.start();
  }
  // 6. Idle memory, on a fresh daemon: one that just freed section 5's
  // thousand processes shrinks while it is measured.
  if (wanted(6)) {
    await daemon.stop();
    daemon = await DaemonProcess.start();
    const idle = await scenario.idleMemory(daemon, quick ? 50 : 200);
    record({ scenario: "6. memory", metric: "per idle process", unit: "KiB", value: single(idle.perProcess / 1024) });
    record({ scenario: "6. memory", metric: "per idle session", unit: "KiB", value: single(idle.perSession / 1024) });
  }
  // 7. Resume (the reconnect issue's figures).
  if (wanted(7)) {
    const resume = sortNumbers(await scenario.resumeLatency(daemon, quick ? 10 : 50));
    record({ scenario: "7. resume", metric: "socket loss -> first live output, p50", unit: "ms", value: single(percentile(resume, 50)) });
    record({ scenario: "7. resume", metric: "socket loss -> first live output, p99", unit: "ms", value: single(percentile(resume, 99)) });
    const cost = sortNumbers(await scenario.resumeCost(daemon, 100, quick ? 5 : 20));
    record({ scenario: "7. resume", metric: "reconnect + resume with 100 processes, p50", unit: "ms", value: single(percentile(cost, 50)) });
  }
  await daemon.stop();

  // 8. What each attack of issues #22 and #34 costs another client (a daemon of its own, with tokens).
  if (wanted(8)) {
    // The attacker and the bystander are two clients: two tokens, so two identities (what budgets count).
    const tokens = { attacker: "bench-adversarial-token", bystander: "bench-bystander-token" };
    const tokenDirectory = mkdtempSync(join(tmpdir(), "execmux-bench-"));
    const tokenFile = join(tokenDirectory, "tokens");
    writeFileSync(tokenFile, `${tokens.bystander}\n`, { mode: 0o600 });
    try {
      const attacked = await DaemonProcess.start(["--metrics-need-token", "false", "--token-file", tokenFile], { EXECMUX_TOKEN: tokens.attacker });
      try {
        const attackIndex = process.argv.indexOf("--attack");
        for (const result of await adversarial(attacked, tokens, attackIndex >= 0 ? process.argv[attackIndex + 1] : undefined)) {
          const scenario = `8. attack: ${result.attack}`;
          if (result.failed) record({ scenario, metric: `FAILED: ${result.failed}`, unit: "", value: single(NaN), met: false });
          record({ scenario, metric: "event-loop delay, worst", unit: "ms", value: single(result.eventLoopMaxMs) });
          record({ scenario, metric: "bystander echo, longest", unit: "ms", value: single(result.bystanderEchoMaxMs) });
          const p99 = result.bystanderEchoP99Ms;
          const target = result.context ? {} : { target: `< ${BYSTANDER_P99_MS} ms`, met: p99 < BYSTANDER_P99_MS };
          record({ scenario, metric: `bystander echo, p99 of ${result.bystanderEchoes}`, unit: "ms", value: single(p99), ...target });
          record({ scenario, metric: "daemon RSS growth, peak", unit: "MiB", value: single(result.rssGrowthMiB) });
        }
      } finally {
        await attacked.stop();
      }
    } finally {
      rmSync(tokenDirectory, { recursive: true, force: true });
    }
  }

  // 9. Against the upstream codex exec-server (servers of its own).
  if (wanted(9)) await vsUpstream(record, { quick, runs: RUNS, streamBytes: STREAM_BYTES, roundTrips: ROUND_TRIPS });

  // 10. Resting cost, against upstream (servers of their own, started fresh).
  if (wanted(10)) await restingCost();

  // 4 runs last: it fills a daemon with a gigabyte of retained output.
  if (wanted(4)) {
    daemon = await DaemonProcess.start([
      "--session-ttl-ms", "3600000",
      "--closed-retention-ms", "3600000",
      "--max-processes-per-session", "1000000",
      "--max-processes", "1000000",
    ]);
    // 4. Spawn, empty daemon then with ~1 GB retained.
    const parallelSpawns = quick ? 200 : 1000;
    const spawnRows = async (label: string) => {
      console.error(`bench: spawning, ${label}...`);
      const client = await connect(daemon.url);
      const sequential = await repeat(RUNS, () => scenario.spawnRate(client, quick ? 50 : 200, 1));
      await daemon.metric("nodejs_eventloop_lag_p99_seconds"); // resets the lag histogram
      const parallel = await repeat(RUNS, () => scenario.spawnRate(client, parallelSpawns, 16));
      const lagP99 = (await daemon.metric("nodejs_eventloop_lag_p99_seconds")) * 1000;
      client.close();
      return { sequential, parallel, lagP99, label };
    };
    const empty = await spawnRows("empty daemon");
    // What the machine itself allows (bare-spawn.ts), measured right after; not interleaved, so the daemon's event-loop delay is its own.
    const bare = await repeat(RUNS, async () => bareSpawnRate(parallelSpawns, 16));
    const retainedMiB = quick ? 128 : 1024;
    console.error(`bench: filling the daemon with ${retainedMiB} MiB of retained output...`);
    await scenario.retainOutput(daemon, retainedMiB);
    const rssLoaded = daemon.rss();
    const loaded = await spawnRows(`${retainedMiB} MiB retained`);
    for (const result of [empty, loaded]) {
      const isLoaded = result === loaded;
      record({ scenario: `4. spawn, ${result.label}`, metric: "sequential", unit: "/s", value: result.sequential });
      record({
        scenario: `4. spawn, ${result.label}`,
        metric: "16 in flight",
        unit: "/s",
        value: result.parallel,
        ...(isLoaded
          ? { baseline: { name: "empty daemon", value: empty.parallel }, ratio: result.parallel.median / empty.parallel.median, target: ">= 0.5 x empty", met: result.parallel.median / empty.parallel.median >= 0.5 }
          : {
              baseline: { name: "bare Node spawn", value: bare },
              ratio: result.parallel.median / bare.median,
              target: `>= ${SPAWN_VS_BARE} x bare Node spawn`,
              met: result.parallel.median / bare.median >= SPAWN_VS_BARE,
            }),
      });
      record({ scenario: `4. spawn, ${result.label}`, metric: "event-loop delay p99", unit: "ms", value: single(result.lagP99) });
    }
    record({ scenario: `4. spawn, ${retainedMiB} MiB retained`, metric: "daemon RSS", unit: "MiB", value: single(rssLoaded / MiB) });
    await daemon.stop();
  }

  const machine = describeMachine();
  const when = new Date().toISOString();
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  const file = new URL(`../results/bench-${when.replace(/[:.]/g, "-")}${quick ? "-quick" : ""}.json`, import.meta.url);
  writeFileSync(file, JSON.stringify({ when, quick, runs: RUNS, machine, rows }, null, 2));
  console.log(table(machine, when));
  console.log(`\nJSON: ${file.pathname}`);
  // A missed target fails the run (and CI or a script around it), naming each miss.
  const missed = rows.filter((row) => row.met === false);
  for (const row of missed) console.error(`bench: target missed: ${row.scenario} / ${row.metric}: ${fmt(row.ratio ?? row.value.median)} (target ${row.target ?? "no failure"})`);
  if (missed.length > 0) {
    console.error(`bench: ${missed.length} target(s) missed`);
    process.exitCode = 2;
  }
}

/**
 * Section 10 (resting-cost.ts): cold starts (WebSocket and stdio, quiet and
 * beside a CPU hog), the tree at rest, and idling, for execmux's default
 * `serve`, the container's mode (`--process-host in-process`, as the image
 * runs it) and upstream, interleaved. Targets, all against upstream in the
 * same run: RSS at most 1.5 x, cold start at most 2 x, idle CPU at most
 * 2 x (plus the 10 ms a measurement can be off by), and at most a few
 * wake-ups a second.
 */
async function restingCost(): Promise<void> {
  const kinds = ["execmux", "execmux in-process", "upstream"] as const;
  const runs = quick ? 2 : 3;
  const idleMs = quick ? 15_000 : 60_000;
  for (const transport of ["ws", "stdio"] as const) {
    for (const hog of [false, true]) {
      const load = hog ? cpuHog() : undefined;
      try {
        const measured = await repeatInterleaved(runs, {
          execmux: async () => (await measureServer("execmux", transport)).cold.closedMs,
          upstream: async () => (await measureServer("upstream", transport)).cold.closedMs,
          floor: async () => (await measureServer("bare Node", transport)).cold.closedMs,
        });
        const ratio = measured.execmux.median / measured.upstream.median;
        record({
          scenario: `10. resting cost, cold start, ${transport === "ws" ? "WebSocket" : "stdio"}${hog ? ", beside a CPU hog" : ""}`,
          metric: "spawn -> first process closed",
          unit: "ms",
          value: measured.execmux,
          baseline: { name: `codex exec-server ${upstreamVersion}`, value: measured.upstream },
          ratio,
          target: "<= 2 x upstream",
          met: ratio <= 2,
        });
        // Context, not a target: the least a Node daemon does (node-floor.ts), against the same upstream.
        record({
          scenario: `10. resting cost, cold start, ${transport === "ws" ? "WebSocket" : "stdio"}${hog ? ", beside a CPU hog" : ""}, bare Node`,
          metric: "spawn -> first process closed",
          unit: "ms",
          value: measured.floor,
          baseline: { name: `codex exec-server ${upstreamVersion}`, value: measured.upstream },
          ratio: measured.floor.median / measured.upstream.median,
        });
      } finally {
        load?.stop();
      }
    }
  }
  const rest: Partial<Record<(typeof kinds)[number], Awaited<ReturnType<typeof measureServer>>>> = {};
  for (const kind of kinds) rest[kind] = await measureServer(kind, "ws", { rest: true, idleMs });
  const upstream = rest.upstream!;
  for (const kind of ["execmux", "execmux in-process"] as const) {
    const ours = rest[kind]!;
    const name = `10. resting cost, at rest (${kind === "execmux" ? "default serve" : "container's mode, in-process"})`;
    const baseline = (value: number) => ({ name: `codex exec-server ${upstreamVersion}`, value: single(value) });
    record({ scenario: name, metric: "processes", unit: "", value: single(ours.atRest!.processes), baseline: baseline(upstream.atRest!.processes) });
    const rssRatio = ours.atRest!.rssMiB / upstream.atRest!.rssMiB;
    record({ scenario: name, metric: "RSS, whole tree", unit: "MiB", value: single(ours.atRest!.rssMiB), baseline: baseline(upstream.atRest!.rssMiB), ratio: rssRatio, target: "<= 1.5 x upstream", met: rssRatio <= 1.5 });
    record({ scenario: name, metric: "PSS, whole tree", unit: "MiB", value: single(ours.atRest!.pssMiB), baseline: baseline(upstream.atRest!.pssMiB) });
    const cpuLimit = 2 * upstream.idle!.cpuMs + 10;
    record({ scenario: name, metric: `idle CPU over ${idleMs / 1000} s`, unit: "ms", value: single(ours.idle!.cpuMs), baseline: baseline(upstream.idle!.cpuMs), target: `<= 2 x upstream + 10 ms (${fmt(cpuLimit)} ms)`, met: ours.idle!.cpuMs <= cpuLimit });
    record({ scenario: name, metric: "idle wake-ups", unit: "/s", value: single(ours.idle!.wakeupsPerSecond), baseline: baseline(upstream.idle!.wakeupsPerSecond), target: "<= 5 /s", met: ours.idle!.wakeupsPerSecond <= 5 });
  }
}

function table(machine: Machine, when: string): string {
  const lines = [
    `execmux bench, ${when}, ${machine.cpus} x ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}${quick ? " (quick)" : ""}`,
    "",
    "| scenario | metric | median | min | max | baseline (median) | ratio | target | met |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const row of rows) {
    const value = (number: number) => `${fmt(number)} ${row.unit}`;
    lines.push(
      `| ${row.scenario} | ${row.metric} | ${value(row.value.median)} | ${value(row.value.min)} | ${value(row.value.max)} | ${row.baseline ? `${row.baseline.name}: ${value(row.baseline.value.median)}` : ""} | ${row.ratio !== undefined ? row.ratio.toFixed(2) : ""} | ${row.target ?? ""} | ${row.met === undefined ? "" : row.met ? "yes" : "no"} |`,
    );
  }
  return lines.join("\n");
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
