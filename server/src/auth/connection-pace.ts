/**
 * New connections per client per second (--max-new-connections-per-second,
 * bursts of one second's worth), each client its identity as for the connection
 * quota. A client opening sockets faster is slowed, not refused: its
 * upgrade waits for its slot. A connection that comes and goes (the 101, a
 * session made and kept, the close, and the kernel's work for each) cost
 * about 1.7 ms of the daemon's CPU in a profile of bench section 8's churn,
 * so a client churning them as fast as it could held a core and kept every
 * other client's keystrokes waiting. Its frames are paced the same way by
 * --max-requests-per-second.
 */
export class ConnectionPace {
  /** One second's worth: a burst of twice that let a churning client hold the event loop for its first 200. */
  private readonly burst: number;
  /** Each client's bucket: tokens as of `at`; a negative count is slots already promised to waiting upgrades. */
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.burst = perSecond;
  }

  /** Takes `client`'s next slot: how long its upgrade waits for it, in ms (0: now). */
  take(client: string): number {
    const now = this.now();
    const found = this.buckets.get(client);
    const bucket = found ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) * this.perSecond) / 1000) - 1;
    bucket.at = now;
    if (!found) {
      this.forgetRested(now);
      this.buckets.set(client, bucket);
    }
    return bucket.tokens >= 0 ? 0 : (-bucket.tokens * 1000) / this.perSecond;
  }

  /** An upgrade whose socket closed (reset, failed) while it waited for its slot: the slot goes back to its client. */
  giveBack(client: string): void {
    const bucket = this.buckets.get(client);
    if (bucket) bucket.tokens = Math.min(this.burst, bucket.tokens + 1);
  }

  /** Clients whose buckets have filled again are forgotten (a fresh bucket is the same): the map holds only recent ones. */
  private forgetRested(now: number): void {
    if (this.buckets.size < 1024) return;
    for (const [client, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) * this.perSecond) / 1000 >= this.burst) this.buckets.delete(client);
    }
  }
}
