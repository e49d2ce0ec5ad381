/** A token bucket: `perSecond` on average, bursts up to twice that. */
export class RateLimiter {
  private tokens: number;
  private last = performance.now();

  constructor(private readonly perSecond: number) {
    this.tokens = perSecond * 2;
  }

  /** Takes one token; false when the bucket is empty. */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** How long until the next token (0 when there is one). */
  msUntilToken(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : ((1 - this.tokens) * 1000) / this.perSecond;
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.perSecond * 2, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
  }
}
