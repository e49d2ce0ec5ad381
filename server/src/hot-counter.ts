/**
 * A Prometheus counter bumped on every frame or output chunk. prom-client's
 * `inc()` hashes and validates its labels on each call: in a CPU profile of
 * the daemon during echo round trips, metrics took about 5% of its busy time.
 * Here the hot path adds to a plain number per label value, and the counter
 * takes the sums up only when it is scraped.
 */
import { Counter, type Registry } from "prom-client";

export class HotCounter<Value extends string> {
  private readonly pending = new Map<Value, number>();

  constructor(options: { name: string; help: string; labelName: string; registry: Registry }) {
    const pending = this.pending;
    new Counter({
      name: options.name,
      help: options.help,
      labelNames: [options.labelName],
      registers: [options.registry],
      collect() {
        for (const [value, amount] of pending) this.inc({ [options.labelName]: value }, amount);
        pending.clear();
      },
    });
  }

  inc(value: Value, amount = 1): void {
    this.pending.set(value, (this.pending.get(value) ?? 0) + amount);
  }
}
