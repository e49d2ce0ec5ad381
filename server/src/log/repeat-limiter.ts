/**
 * Repeated log lines are rate-limited: each message (its text, per level)
 * may be written LINES_PER_WINDOW times per window; the rest are counted,
 * and the first line written in a later window is preceded by one line per
 * message saying how many were left out. A client that makes the daemon log
 * the same thing in a loop (refused handshakes, connections closed for
 * protocol errors) costs a bounded amount of log, whatever it does.
 */
export const LOG_WINDOW_MS = 10_000;
export const LINES_PER_WINDOW = 100;
/** Distinct messages tracked per window; past this, new ones share one allowance (a client cannot grow the table). */
const MAX_TRACKED_MESSAGES = 1024;
const OVERFLOW_KEY = "(other messages)";

interface Tally {
  readonly message: string;
  readonly level: number;
  written: number;
  suppressed: number;
}

/** The text a call logs: `log.info(obj, "msg")`, `log.info("msg")` or `log.error(err)`. */
function messageOf(args: readonly unknown[]): string {
  for (const arg of args.slice(0, 2)) if (typeof arg === "string") return arg;
  const first = args[0];
  if (first instanceof Error) return first.message;
  return "(no message)";
}

/** pino's log function for one level. */
type Write = (...values: unknown[]) => void;

export class RepeatLimiter {
  private tallies = new Map<string, Tally>();
  private windowEnds = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** pino's `hooks`: `logMethod` decides whether each line is written. */
  hooks(): { logMethod(this: unknown, args: unknown[], write: Write, level: number): void } {
    const limiter = this;
    return {
      logMethod(this: unknown, args: unknown[], write: Write, level: number) {
        limiter.admit(this, args, write, level);
      },
    };
  }

  private admit(logger: unknown, args: unknown[], write: Write, level: number): void {
    this.rollWindow(logger, write);
    const tally = this.tallyOf(messageOf(args), level);
    if (tally.written >= LINES_PER_WINDOW) {
      tally.suppressed++;
      return;
    }
    tally.written++;
    write.apply(logger, args);
  }

  private tallyOf(message: string, level: number): Tally {
    const key = `${level}\u0000${message}`;
    const known = this.tallies.get(key);
    if (known) return known;
    if (this.tallies.size >= MAX_TRACKED_MESSAGES) {
      const overflowKey = `${level}\u0000${OVERFLOW_KEY}`;
      const overflow = this.tallies.get(overflowKey) ?? { message: OVERFLOW_KEY, level, written: 0, suppressed: 0 };
      this.tallies.set(overflowKey, overflow);
      return overflow;
    }
    const tally = { message, level, written: 0, suppressed: 0 };
    this.tallies.set(key, tally);
    return tally;
  }

  /** A new window: say what the last one left out, then start counting afresh. */
  private rollWindow(logger: unknown, write: Write): void {
    const now = this.now();
    if (now < this.windowEnds) return;
    this.windowEnds = now + LOG_WINDOW_MS;
    const previous = this.tallies;
    this.tallies = new Map();
    for (const tally of previous.values()) {
      if (tally.suppressed === 0) continue;
      // At the level of the call that rolled the window, which is enabled.
      write.call(logger, { suppressed: tally.suppressed, message: tally.message, windowMs: LOG_WINDOW_MS }, "repeated log lines were left out");
    }
  }
}
