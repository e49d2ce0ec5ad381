/**
 * Differential conformance: one case, a list of wire steps, runs identically
 * against the real upstream `codex exec-server` and against execmux; what each
 * observed is normalized (ids, peers, clocks, scratch paths, chunking) and
 * compared, upstream being the expected side. A case where execmux differs on
 * purpose says why and what it checks instead.
 *
 * Steps run one at a time and each request is awaited before the next:
 * upstream handles one request at a time per connection, execmux runs them
 * concurrently, so a case never pipelines unless that is what it is about.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchTestDaemon } from "./daemon.js";
import type { DifferentialCase, Observation } from "./differential-case.js";
import { runCase, type Run } from "./differential-run.js";
import { launchUpstreamExecServer, upstreamVersion, type UpstreamServer } from "./upstream.js";

export { CODEX_INITIALIZE, type Deviation, type DifferentialCase, type Observation, type Step } from "./differential-case.js";

export interface DifferentialOptions {
  /** A loopback HTTP server for the family, started and stopped with it; `<http>` in frames is its origin. */
  readonly httpTarget?: { start(): Promise<void>; stop(): Promise<void>; readonly origin: string };
  /** How each server is started, when not as usual (inside a root of the case's making, say). */
  readonly launch?: {
    upstream(): Promise<{ url: string; stop(): void }>;
    execmux(): Promise<{ url: string; close(): Promise<void> | void }>;
  };
}

/**
 * One describe block per family: one upstream and one execmux for all its
 * cases (each case opens fresh connections, so nothing leaks between them).
 * Filter with `vitest run test/upstream-differential.test.ts -t "<family>"`.
 */
export function describeDifferential(family: string, cases: DifferentialCase[], options: DifferentialOptions = {}): void {
  describe(family, () => {
    let upstream: Pick<UpstreamServer, "url" | "stop"> | undefined;
    let other: { url: string; close(): Promise<void> | void } | undefined;
    let setupFailure: unknown;
    beforeAll(async () => {
      try {
        // All settle, and each is kept as soon as it is up, so afterAll stops it even when another failed.
        const launchUpstream = options.launch?.upstream ?? launchUpstreamExecServer;
        const launchOther = SELF_CHECK ? launchUpstream().then((second) => ({ url: second.url, close: second.stop })) : (options.launch?.execmux ?? launchTestDaemon)();
        const launched = await Promise.allSettled([
          launchUpstream().then((server) => (upstream = server)),
          launchOther.then((server) => (other = server)),
          options.httpTarget?.start(),
        ]);
        for (const outcome of launched) if (outcome.status === "rejected") throw outcome.reason;
      } catch (error) {
        // Every case fails with it (a failed hook would only mark them skipped): a missing upstream is never quiet.
        setupFailure = error;
      }
    });
    afterAll(async () => {
      upstream?.stop();
      await Promise.all([other?.close(), options.httpTarget?.stop()]);
    });
    for (const testCase of cases) {
      const name = testCase.knownFailure ? `${testCase.name} [known failure: ${testCase.knownFailure}]` : testCase.name;
      if (testCase.since && olderThan(upstreamVersion, testCase.since)) {
        it.skip(`${name} [upstream ${upstreamVersion} predates it: since ${testCase.since}]`, () => undefined);
        continue;
      }
      // Against two upstreams (self check) a known failure is no failure.
      (testCase.knownFailure && !SELF_CHECK ? it.fails : it)(name, async () => {
        if (setupFailure) throw setupFailure;
        const httpOrigin = options.httpTarget?.origin;
        // One after the other, upstream first: a case that hangs on one server does not disturb the other.
        const upstreamRun = await runCase(testCase, { name: "upstream", url: upstream!.url }, httpOrigin);
        const execmuxRun = await runCase(testCase, { name: "execmux", url: other!.url }, httpOrigin);
        dump(family, testCase, upstreamRun, execmuxRun);
        compare(testCase, upstreamRun.observations, execmuxRun.observations);
      });
    }
  });
}

/**
 * DIFFERENTIAL_SELF_CHECK=1 runs every case against two upstream servers and
 * expects no difference beyond a deviation's projection (its assertions are
 * about execmux, so they are skipped): a case that fails then depends on
 * timing or on something the normalization missed.
 */
const SELF_CHECK = Boolean(process.env["DIFFERENTIAL_SELF_CHECK"]);

/**
 * What execmux answers as the newest upstream does, which an older upstream
 * (EXECMUX_UPSTREAM_CODEX_VERSION) did not yet say: projected away from both
 * transcripts when the suite runs against it, so the same cases hold for
 * every verified version. 0.171 added process/start's `error.data.kind`.
 */
function forUpstreamVersion(transcript: Observation[]): Observation[] {
  if (!olderThan(upstreamVersion, "0.171.0")) return transcript;
  return JSON.parse(
    JSON.stringify(transcript, (key, value: unknown) => {
      const isKindOnly = key === "data" && value !== null && typeof value === "object" && Object.keys(value).length === 1 && "kind" in value;
      return isKindOnly ? undefined : value;
    }),
  ) as Observation[];
}

export function olderThan(version: string, than: string): boolean {
  const [a, b] = [version, than].map((text) => text.split(/[.-]/).slice(0, 3).map(Number));
  for (let index = 0; index < 3; index++) if (a![index] !== b![index]) return a![index]! < b![index]!;
  return false;
}

function compare(testCase: DifferentialCase, upstreamTranscript: Observation[], execmuxTranscript: Observation[]): void {
  const [upstream, execmux] = [forUpstreamVersion(upstreamTranscript), forUpstreamVersion(execmuxTranscript)];
  const deviation = testCase.differs;
  if (!deviation || (SELF_CHECK && !deviation.project)) {
    expect(execmux, `execmux (+) against upstream (-); ${firstDifference(upstream, execmux)}`).toEqual(upstream);
    return;
  }
  if (deviation.project) {
    const [expected, actual] = [deviation.project(upstream), deviation.project(execmux)];
    const difference = Array.isArray(expected) && Array.isArray(actual) ? firstDifference(expected as Observation[], actual as Observation[]) : "";
    expect(actual, `differs on purpose (${deviation.why}), but the projections must match; ${difference}`).toEqual(expected);
  }
  if (!SELF_CHECK) deviation.assert?.(upstream, execmux);
}

/** The first step whose observation differs, for the failure message. */
function firstDifference(upstream: Observation[], execmux: Observation[]): string {
  for (let index = 0; index < Math.max(upstream.length, execmux.length); index++) {
    const [expected, actual] = [upstream[index], execmux[index]];
    if (canonical(expected) === canonical(actual)) continue;
    return `first difference at ${expected?.step ?? actual?.step}: upstream ${canonical(expected?.observed)}, execmux ${canonical(actual?.observed)}`;
  }
  return "no difference";
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, node: unknown) =>
    node && typeof node === "object" && !Array.isArray(node)
      ? Object.fromEntries(Object.entries(node as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : node,
  ) ?? "undefined";
}

/** DIFFERENTIAL_DUMP=<dir>: both transcripts and raw frame logs per case, to read what each server did. */
function dump(family: string, testCase: DifferentialCase, upstream: Run, execmux: Run): void {
  const directory = process.env["DIFFERENTIAL_DUMP"];
  if (!directory) return;
  const file = join(directory, `${family}--${testCase.name}`.replace(/[^\w.-]+/g, "_") + ".json");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ family, case: testCase.name, differs: testCase.differs?.why, upstream, execmux }, null, 2));
}

// ---------------------------------------------------------------- projections for cases that differ on purpose

/** The observation of the step with this label (labels are `<connection>: <method> #<id>`). */
export function observationOf(transcript: Observation[], step: string): unknown {
  const found = transcript.find((observation) => observation.step === step);
  if (!found) throw new Error(`no step "${step}" in ${transcript.map((observation) => observation.step).join(", ")}`);
  return found.observed;
}

/** Every member named `key`, anywhere, replaced by `value` (or dropped when it is undefined). */
export function replacingMember(key: string, value: unknown): (transcript: Observation[]) => unknown {
  return (transcript) => JSON.parse(JSON.stringify(transcript, (name, node: unknown) => (name === key ? value : node)));
}

/** Error messages that start with `prefix` are compared up to it: what follows is another library's wording. */
export function messagesCutAfter(prefix: string): (transcript: Observation[]) => unknown {
  return (transcript) =>
    JSON.parse(
      JSON.stringify(transcript, (key, value: unknown) =>
        key === "message" && typeof value === "string" && value.startsWith(prefix) ? `${prefix}…` : value,
      ),
    );
}
