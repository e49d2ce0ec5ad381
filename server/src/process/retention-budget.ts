/**
 * The daemon's budget for retained output: every output log charges what its
 * chunks really cost (see output-log.ts) and gives it back on eviction. Past
 * the budget the evictor (the session registry) frees memory by its
 * documented order. It frees down to seven eighths of the budget, so a
 * stream that keeps the daemon at the budget pays for a search of its
 * victims once per eighth of the budget, not once per chunk.
 */
export class RetentionBudget {
  private used = 0;
  private evicting = false;
  private evictor: ((bytesToFree: number) => void) | undefined;

  constructor(readonly limitBytes: number) {}

  get usedBytes(): number {
    return this.used;
  }

  /** Who frees memory past the budget; called with how much it should free. */
  setEvictor(evictor: (bytesToFree: number) => void): void {
    this.evictor = evictor;
  }

  /** Adds (or, negative, gives back) bytes; past the budget, evicts before returning. */
  charge(bytes: number): void {
    this.used += bytes;
    if (this.used <= this.limitBytes || this.evicting || !this.evictor) return;
    // Eviction charges negative amounts back through here: no recursion.
    this.evicting = true;
    try {
      this.evictor(this.used - this.limitBytes + Math.floor(this.limitBytes / 8));
    } finally {
      this.evicting = false;
    }
  }
}
