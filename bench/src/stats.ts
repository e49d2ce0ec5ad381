/** Small statistics for the bench: medians of runs, percentiles of samples. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: percentile(sorted, 50), min: sorted[0] ?? NaN, max: sorted[sorted.length - 1] ?? NaN, runs: sorted.length };
}

/** Percentile of already sorted samples (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * Echo round trips made before the timed ones, on the same connection, by us
 * and the baselines alike: a long-running daemon has compiled its hot paths,
 * and a cold one's first thousand round trips measured up to twice as slow.
 */
export const ECHO_WARM_UP_TRIPS = 1000;

export const sortNumbers = (values: number[]) => values.sort((a, b) => a - b);

/**
 * Like `repeat` for several measures that are compared with each other:
 * their runs take turns (a, b, c, a, b, c, ...), so a machine that is slower
 * for a while slows all of them alike instead of one.
 */
export async function repeatInterleaved<M extends Record<string, () => Promise<number>>>(
  runs: number,
  measures: M,
): Promise<{ [K in keyof M]: Summary }> {
  const entries = Object.entries(measures);
  for (const [, measure] of entries) await measure();
  const values = new Map<string, number[]>(entries.map(([key]) => [key, []]));
  for (let run = 0; run < runs; run++) {
    for (const [key, measure] of entries) values.get(key)!.push(await measure());
  }
  return Object.fromEntries(entries.map(([key]) => [key, summarize(values.get(key)!)])) as { [K in keyof M]: Summary };
}

/** Runs `measure` once to warm up (JIT, page cache), then `runs` times, and summarizes those. */
export async function repeat(runs: number, measure: () => Promise<number>): Promise<Summary> {
  return (await repeatInterleaved(runs, { measure })).measure;
}

/** One row of the bench's table (and JSON). */
export interface Row {
  scenario: string;
  metric: string;
  unit: string;
  value: Summary;
  baseline?: { name: string; value: Summary };
  /** value / baseline (or baseline / value where lower is better). */
  ratio?: number;
  target?: string;
  /** false fails the run (exit 2). */
  met?: boolean;
}

/** run.ts's record(), for sections in files of their own. */
export type Recorder = (row: Row) => void;

/** Runs `one` `total` times, `inFlight` at once; completions per second. */
export async function ratePerSecond(total: number, inFlight: number, one: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return total / ((performance.now() - started) / 1000);
}
