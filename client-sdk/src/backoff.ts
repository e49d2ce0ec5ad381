/** Reconnect timing: exponential backoff with jitter, and a deadline. */
export interface ReconnectOptions {
  /** Reconnect automatically when the socket drops. Default true. */
  enabled?: boolean;
  /** Delay before the first attempt. Default 100 ms. */
  initialDelayMs?: number;
  /** Upper bound of the delay between attempts. Default 5 s. */
  maxDelayMs?: number;
  /** Growth of the delay per attempt. Default 2. */
  factor?: number;
  /** Fraction of each delay that is random, so that many clients cut off
   * together do not come back together. Default 0.5. */
  jitter?: number;
  /** Give up (and report the session lost) after this long without a
   * connection. Default 60 s, the daemon's default session TTL. */
  giveUpAfterMs?: number;
}

export type ResolvedReconnectOptions = Required<ReconnectOptions>;

export function resolveReconnectOptions(options: ReconnectOptions | false | undefined): ResolvedReconnectOptions {
  const given = options === false ? { enabled: false } : (options ?? {});
  return {
    enabled: given.enabled ?? true,
    initialDelayMs: given.initialDelayMs ?? 100,
    maxDelayMs: given.maxDelayMs ?? 5_000,
    factor: given.factor ?? 2,
    jitter: given.jitter ?? 0.5,
    giveUpAfterMs: given.giveUpAfterMs ?? 60_000,
  };
}

/** Delay before attempt `attempt` (1-based). */
export function backoffDelay(options: ResolvedReconnectOptions, attempt: number, random = Math.random): number {
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** (attempt - 1));
  return Math.round(base * (1 - options.jitter + options.jitter * random()));
}
