/**
 * Flow control for requests: frames are handled only while the connection's
 * reply budget has room. Past it, the socket stops being read (the client's
 * further frames wait in its own TCP buffers, not in the daemon) until the
 * client has taken enough of its replies.
 *
 * ws hands over every frame of a network read in one go, so a few frames
 * may arrive after the pause: they wait here, at most one read's worth (or
 * one frame of up to --max-message-bytes), and are handled in order once
 * the budget has room again.
 */
/** What the gate needs of a transport: a WebSocket, or any stream that can stop being read. */
export interface PausableSource {
  pause(): void;
  resume(): void;
}

export interface GateCondition {
  /** True while frames may be handled. */
  admitsFrames(): boolean;
}

export class InboundGate {
  private readonly waiting: Buffer[] = [];
  private paused = false;
  private closed = false;
  /** Set while waiting frames are being handled: a reply they send calls recheck() again, which must not recurse. */
  private draining = false;

  constructor(
    private readonly socket: PausableSource,
    private readonly condition: GateCondition,
    private readonly handle: (data: Buffer) => void,
    /** Told when reading stops (a client that does not read its replies). */
    private readonly onPause: () => void = () => undefined,
  ) {}

  /** A frame from the socket: handled now, or after the ones already waiting. */
  offer(data: Buffer): void {
    if (this.closed) return;
    if (this.waiting.length === 0 && !this.draining && this.condition.admitsFrames()) {
      this.handle(data);
      return;
    }
    this.waiting.push(data);
    this.pause();
  }

  /** The reply budget may have room again (the socket wrote something). */
  recheck(): void {
    if (!this.paused || this.closed || this.draining) return;
    this.draining = true;
    try {
      while (!this.closed && this.waiting.length > 0 && this.condition.admitsFrames()) this.handle(this.waiting.shift()!);
    } finally {
      this.draining = false;
    }
    if (!this.closed && this.waiting.length === 0 && this.condition.admitsFrames()) {
      this.paused = false;
      this.socket.resume();
    }
  }

  /** The connection ended: what still waits is dropped. */
  close(): void {
    this.closed = true;
    this.waiting.length = 0;
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
    this.onPause();
  }
}
