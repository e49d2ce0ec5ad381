/**
 * How much a connection may have in replies that the client has not taken
 * yet: queued replies, what the socket still buffers, and replies being
 * built. A client that sends requests but never reads the answers would
 * otherwise grow the daemon's memory by the size of every answer (a 60-byte
 * `process/read` can answer with a megabyte and a half of base64).
 *
 * The inbound gate reads no further frame while the budget is spent, and a
 * handler whose reply can be large (process/read) sizes it to the room left.
 */
export class ReplyBudget {
  private reservedBytes = 0;
  /** Set once the bound was passed; cleared below half of it (hysteresis, so reading does not flap). */
  private spent = false;

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
    };
  }
}
