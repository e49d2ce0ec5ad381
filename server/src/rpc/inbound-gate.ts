/**
 * Admission of a connection's frames. A frame is handled only while
 *
 * - the connection's reply budget has room (a client that does not take
 *   its replies is not read any further until it has taken half);
 * - the connection is within its rate (--max-requests-per-second, bursts to
 *   twice): every frame counts, requests, notifications and garbage alike;
 * - it is the connection's turn (turn-scheduler.ts; until its `initialize`,
 *   the turn of its client's connections opening and closing): while other
 *   connections wait for theirs, a frame waits too, and waiting connections
 *   take turns one frame each, within a few milliseconds per event-loop turn
 *   for all of them together; so no number of busy sockets holds up another
 *   by more than a frame each;
 * - no `initialize` is still being answered: a client may send its first
 *   calls right behind it (upstream handles a connection's requests one at
 *   a time), and they need the session it makes;
 * - no earlier frame of the connection is still being parsed off the event
 *   loop (off-thread-frames.ts): frames are handled in the order they came.
 *
 * Otherwise the socket stops being read: further frames wait in the
 * client's own TCP buffers, not in the daemon. ws goes on handing over the
 * frames of a network read it already has (one per pass of the event loop),
 * so a few may arrive after the pause: they wait here (at most one read's
 * worth, or one frame of up to --max-message-bytes) and are handled in order
 * once the reason has passed.
 */
import type { RateLimiter } from "./rate-limiter.js";
import type { TurnScheduler } from "./turn-scheduler.js";

/** What the gate needs of a transport: a WebSocket, or any stream that can stop being read. */
export interface PausableSource {
  pause(): void;
  resume(): void;
}

/** The reply budget, as the gate sees it (reply-budget.ts). */
export interface ReplyRoom {
  /** False while the client has too many replies not taken. */
  admitsFrames(): boolean;
}

export type PauseReason = "replies" | "rate" | "turn" | "handshake" | "parsing";

export class InboundGate {
  private readonly waiting: Buffer[] = [];
  private paused = false;
  /** Why reading is paused, as last found: each new reason is reported once. */
  private pausedFor: PauseReason | undefined;
  private closed = false;
  /** Set while waiting frames are being handled: a reply they send calls recheck() again, which must not recurse. */
  private draining = false;
  /** Waiting for this connection's turn in the scheduler (one frame is handled when it comes). */
  private awaitingTurn = false;
  /** Frames being parsed off the event loop: later ones wait until they are handled. */
  private parsing = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: PausableSource,
    private readonly replies: ReplyRoom,
    private readonly rate: RateLimiter,
    private readonly handle: (data: Buffer) => void,
    /** True while an `initialize` is being answered; recheck() once it is. */
    private readonly handshaking: () => boolean,
    /** Told when reading stops, and why. */
    private readonly onPause: (reason: PauseReason) => void = () => undefined,
    /**
     * The daemon's turns, shared by every connection: `owner` is this
     * connection's place in them, `waitsAt()` the place its next frame waits
     * at (its client's lifecycle place until `initialize`, turn-scheduler.ts).
     */
    private readonly turns?: { scheduler: TurnScheduler; owner: unknown; waitsAt(): unknown },
  ) {}

  /** A frame from the socket: handled now, or after the ones already waiting. */
  offer(data: Buffer): void {
    if (this.closed) return;
    this.waiting.push(data);
    if (this.waiting.length === 1 && !this.draining && !this.awaitingTurn) this.drain();
    else this.pause();
  }

  /** The reply budget may have room again (the socket wrote something). */
  recheck(): void {
    if (this.paused && !this.draining && !this.awaitingTurn && !this.closed) this.drain();
  }

  /** Later frames wait until `handled` settles (a frame parsed off the event loop was handled). */
  holdUntil(handled: Promise<unknown>): void {
    this.parsing++;
    void handled.finally(() => {
      this.parsing--;
      this.recheck();
    });
  }

  /** The connection ended: what still waits is dropped. */
  close(): void {
    this.closed = true;
    this.waiting.length = 0;
    clearTimeout(this.retryTimer);
    this.turns?.scheduler.forget(this.turns.owner);
  }

  /**
   * Handles waiting frames while nothing blocks them. `turnCame`: the
   * scheduler called, it is this connection's turn for one frame.
   */
  private drain(turnCame = false): void {
    this.draining = true;
    try {
      for (let ownTurn = turnCame; !this.closed && this.waiting.length > 0; ownTurn = false) {
        const blocked = this.blockedBy(ownTurn);
        if (blocked) {
          this.pause(blocked);
          return;
        }
        const frame = this.waiting.shift()!;
        // Handled outside the rotation, it still counts against its client's share of the event loop.
        if (ownTurn || !this.turns) this.handle(frame);
        else this.turns.scheduler.runCharged(this.turns.waitsAt(), () => this.handle(frame));
      }
    } finally {
      this.draining = false;
    }
    if (!this.closed && this.paused) {
      this.paused = false;
      this.pausedFor = undefined;
      this.socket.resume();
    }
  }

  /** Why the next frame must wait, if it must. Takes a rate token when it need not. */
  private blockedBy(ownTurn: boolean): PauseReason | undefined {
    if (this.handshaking()) return "handshake";
    if (this.parsing > 0) return "parsing";
    if (!this.replies.admitsFrames()) return "replies";
    if (!ownTurn && this.turns && !this.turns.scheduler.mayRun(this.turns.waitsAt())) return "turn";
    if (!this.rate.take()) return "rate";
    return undefined;
  }

  private pause(reason?: PauseReason): void {
    if (!this.paused) {
      this.paused = true;
      this.socket.pause();
    }
    if (reason !== undefined && reason !== this.pausedFor) {
      this.pausedFor = reason;
      this.onPause(reason);
    }
    // Replies: the outbound calls recheck() as it writes; handshake: the connection, once answered; parsing: holdUntil; turn: the scheduler. Rate passes with time.
    if (reason === "turn" && !this.awaitingTurn && this.turns) {
      this.awaitingTurn = true;
      this.turns.scheduler.enqueue(this.turns.waitsAt(), () => {
        this.awaitingTurn = false;
        if (!this.closed) this.drain(true);
      });
    }
    if (reason === "rate" && this.retryTimer === undefined) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.recheck();
      }, Math.max(1, Math.ceil(this.rate.msUntilToken())));
    }
  }
}
