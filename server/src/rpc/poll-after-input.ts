/**
 * While a client and a process are exchanging input and output quickly (an
 * agent driving a REPL, the bench's echo round trips), the daemon keeps its
 * event loop polling (epoll without a timeout) for a moment after each
 * write instead of going to sleep, so the process's answer and the client's
 * next message are read at once. Waking a CPU that has gone idle can take
 * longer than the exchange itself: on this project's bench machine (a VM
 * without guest halt-polling) it roughly halves back-to-back echo round
 * trips (bench section 3, rows "poll after input off"). Go's scheduler
 * spins the same way before it sleeps, which is much of why websocketd
 * echoes fast.
 *
 * It costs CPU only during such an exchange: a write less than RAPID_MS
 * after the one before starts a poll of at most the configured window.
 * Keystrokes of a person typing are further apart and never start one.
 */

/** Writes closer together than this are an exchange in progress. */
const RAPID_MS = 1;

export class PollAfterInput {
  private lastInputAt = Number.NEGATIVE_INFINITY;
  private until = 0;
  private polling = false;

  /** `windowMicros` 0 turns polling off. */
  constructor(
    private readonly windowMicros: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Input was just written to a process. */
  written(): void {
    const now = this.now();
    const rapid = now - this.lastInputAt < RAPID_MS;
    this.lastInputAt = now;
    if (!rapid || this.windowMicros <= 0) return;
    this.until = now + this.windowMicros / 1000;
    if (this.polling) return;
    this.polling = true;
    setImmediate(this.tick);
  }

  /** One loop iteration: while an immediate is pending, libuv polls without blocking. */
  private readonly tick = (): void => {
    if (this.now() < this.until) setImmediate(this.tick);
    else this.polling = false;
  };
}
