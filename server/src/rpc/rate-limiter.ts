/** A token bucket: `perSecond` on average, bursts up to twice that. */
export class RateLimiter {
  private tokens: number;
  private last = performance.now();

  constructor(private readonly perSecond: number) {
    this.tokens = perSecond * 2;
  }

  /** Takes one token; false when the bucket is empty. */
  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.perSecond * 2, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
