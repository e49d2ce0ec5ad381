/**
 * The daemon's own metrics, kept as plain numbers: bumping one is a map
 * lookup and an add (prom-client's `inc()` hashed and validated its labels
 * on every call: about 5% of the daemon's busy time during echo round trips),
 * and nothing of Prometheus is loaded until someone scrapes /metrics, when
 * each instrument writes itself in its text format. Each has at most one
 * label: its values are small fixed sets (method names, streams, codes),
 * never an id, a command or a path.
 */

/** Prometheus text format's escaping of a label value. */
const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

abstract class Instrument {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly type: "counter" | "gauge" | "histogram",
    protected readonly labelName: string | undefined,
  ) {}

  protected labels(value: string | undefined, extra?: string): string {
    const parts = [...(value !== undefined && this.labelName ? [`${this.labelName}="${escape(value)}"`] : []), ...(extra ? [extra] : [])];
    return parts.length > 0 ? `{${parts.join(",")}}` : "";
  }

  protected abstract lines(): string[];

  text(): string {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`, ...this.lines()].join("\n");
  }
}

/** A counter (or, as Gauge, a value that goes up and down), by its label's value. */
export class Counter<V extends string = never> extends Instrument {
  protected readonly values = new Map<V | undefined, number>();

  constructor(name: string, help: string, labelName?: string, type: "counter" | "gauge" = "counter") {
    super(name, help, type, labelName);
  }

  inc(value?: V, amount = 1): void {
    this.values.set(value, (this.values.get(value) ?? 0) + amount);
  }

  protected lines(): string[] {
    if (this.values.size === 0) return this.labelName ? [] : [`${this.name} 0`];
    return [...this.values].map(([value, amount]) => `${this.name}${this.labels(value)} ${amount}`);
  }
}

export class Gauge<V extends string = never> extends Counter<V> {
  constructor(name: string, help: string, labelName?: string) {
    super(name, help, labelName, "gauge");
  }
  dec(value?: V): void {
    this.inc(value, -1);
  }
  set(value: V | undefined, amount: number): void {
    this.values.set(value, amount);
  }
}

/** A histogram of durations in seconds, by its label's value. */
export class Histogram<V extends string = never> extends Instrument {
  private readonly series = new Map<V | undefined, { counts: number[]; sum: number; count: number }>();

  constructor(
    name: string,
    help: string,
    labelName: string,
    private readonly buckets: readonly number[],
  ) {
    super(name, help, "histogram", labelName);
  }

  observe(value: V | undefined, seconds: number): void {
    let entry = this.series.get(value);
    if (!entry) this.series.set(value, (entry = { counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let index = 0; index < this.buckets.length; index++) if (seconds <= this.buckets[index]!) entry.counts[index]!++;
    entry.sum += seconds;
    entry.count++;
  }

  /** Starts timing; the returned function observes the time since. */
  startTimer(value?: V): () => void {
    const start = performance.now();
    return () => this.observe(value, (performance.now() - start) / 1000);
  }

  protected lines(): string[] {
    return [...this.series].flatMap(([value, { counts, sum, count }]) => [
      ...this.buckets.map((bound, index) => `${this.name}_bucket${this.labels(value, `le="${bound}"`)} ${counts[index]}`),
      `${this.name}_bucket${this.labels(value, 'le="+Inf"')} ${count}`,
      `${this.name}_sum${this.labels(value)} ${sum}`,
      `${this.name}_count${this.labels(value)} ${count}`,
    ]);
  }
}
