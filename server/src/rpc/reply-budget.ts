/**
 * How much a connection may have in replies that the client has not taken
 * yet: queued replies, what the socket still buffers, and replies being
 * built. A client that sends requests but never reads the answers would
 * otherwise grow the daemon's memory by the size of every answer (a 60-byte
 * `process/read` can answer with a megabyte and a half of base64).
 *
 * The inbound gate reads no further frame while the budget is spent, and a
 * handler whose reply can be large sizes it to the room left (process/read)
 * or waits for room for it before building it (fs/readFile).
 */

interface RoomWaiter {
  readonly bytes: number;
  readonly resolve: () => void;
}

export class ReplyBudget {
  private reservedBytes = 0;
  /** Set once the bound was passed; cleared below half of it (hysteresis, so reading does not flap). */
  private spent = false;
  /** Replies waiting for room, in arrival order. */
  private waiters: RoomWaiter[] = [];

  constructor(
    readonly limitBytes: number,
    /** Bytes queued or buffered on the socket and not yet written to the network. */
    private readonly unsentBytes: () => number,
  ) {}

  /** What is owed to the client right now: unsent replies plus replies being built. */
  get owedBytes(): number {
    return this.unsentBytes() + this.reservedBytes;
  }

  /** Bytes a reply being built may still take before the bound. */
  get roomBytes(): number {
    return Math.max(0, this.limitBytes - this.owedBytes);
  }

  /** False while the client owes the daemon a drain: no further frame is read. */
  admitsFrames(): boolean {
    const owed = this.owedBytes;
    if (this.spent) this.spent = owed > this.limitBytes / 2;
    else this.spent = owed >= this.limitBytes;
    return !this.spent;
  }

  /**
   * Resolves once a reply of `bytes` fits: with room for it, or, for one
   * larger than the room, once the connection owes at most half the bound
   * (where the inbound gate reads again). Such a reply may pass the bound,
   * as process/read's first chunk may, but only one at a time: once it is
   * reserved, the next waits until the client has taken it. Waiting for
   * nothing owed at all instead would starve a large reply on a connection
   * whose processes keep the socket busy with output. Waiters are let
   * through in arrival order; `recheck` must be called whenever bytes were
   * sent. An aborted `signal` resolves it too (the caller checks).
   */
  whenRoom(bytes: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || (this.waiters.length === 0 && this.fits(bytes))) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: RoomWaiter = {
        bytes,
        resolve: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        waiter.resolve();
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Lets waiting replies through that fit now. */
  recheck(): void {
    while (this.waiters.length > 0 && this.fits(this.waiters[0]!.bytes)) this.waiters.shift()!.resolve();
  }

  private fits(bytes: number): boolean {
    return this.roomBytes >= bytes || this.owedBytes <= this.limitBytes / 2;
  }

  /**
   * Counts `bytes` of a reply that is being built against the bound until
   * it is queued (then the queue counts it); returns the release.
   */
  reserve(bytes: number): () => void {
    this.reservedBytes += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reservedBytes -= bytes;
      this.recheck();
    };
  }
}
