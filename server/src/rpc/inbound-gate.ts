/**
 * Admission of a connection's frames. A frame is handled only while
 *
 * - the connection's reply budget has room (a client that does not take
 *   its replies is not read any further until it has taken half);
 * - the connection is within its rate (--max-requests-per-second, bursts to
 *   twice): every frame counts, requests, notifications and garbage alike;
 * - the connection has not had its share of this event-loop turn (a few
 *   milliseconds), so one socket's backlog of frames cannot hold up the
 *   others, whatever each frame costs;
 * - no `initialize` is still being answered: a client may send its first
 *   calls right behind it (upstream handles a connection's requests one at
 *   a time), and they need the session it makes.
 *
 * Otherwise the socket stops being read: further frames wait in the
 * client's own TCP buffers, not in the daemon. ws hands over every frame of
 * a network read at once, so a few may arrive after the pause: they wait
 * here (at most one read's worth, or one frame of up to --max-message-bytes)
 * and are handled in order once the reason has passed.
 */
import type { RateLimiter } from "./rate-limiter.js";

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

export type PauseReason = "replies" | "rate" | "turn" | "handshake";

/**
 * Handling time one connection gets per event-loop turn before its next
 * frames wait for the next turn: short enough that another client's echo
 * waits at most this long for each busy socket.
 */
export const TURN_BUDGET_MS = 2;

export class InboundGate {
  private readonly waiting: Buffer[] = [];
  private paused = false;
  /** Why reading is paused, as last found: each new reason is reported once. */
  private pausedFor: PauseReason | undefined;
  private closed = false;
  /** Set while waiting frames are being handled: a reply they send calls recheck() again, which must not recurse. */
  private draining = false;
  /** When this turn's handling began; undefined between turns. */
  private turnStarted: number | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryImmediate: NodeJS.Immediate | undefined;

  constructor(
    private readonly socket: PausableSource,
    private readonly replies: ReplyRoom,
    private readonly rate: RateLimiter,
    private readonly handle: (data: Buffer) => void,
    /** True while an `initialize` is being answered; recheck() once it is. */
    private readonly handshaking: () => boolean,
    /** Told when reading stops, and why. */
    private readonly onPause: (reason: PauseReason) => void = () => undefined,
  ) {}

  /** A frame from the socket: handled now, or after the ones already waiting. */
  offer(data: Buffer): void {
    if (this.closed) return;
    this.waiting.push(data);
    if (this.waiting.length === 1 && !this.draining) this.drain();
    else this.pause();
  }

  /** The reply budget may have room again (the socket wrote something). */
  recheck(): void {
    if (this.paused && !this.draining && !this.closed) this.drain();
  }

  /** The connection ended: what still waits is dropped. */
  close(): void {
    this.closed = true;
    this.waiting.length = 0;
    clearTimeout(this.retryTimer);
    clearImmediate(this.retryImmediate);
  }

  private drain(): void {
    this.draining = true;
    try {
      while (!this.closed && this.waiting.length > 0) {
        const blocked = this.blockedBy();
        if (blocked) {
          this.pause(blocked);
          return;
        }
        this.handle(this.waiting.shift()!);
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
  private blockedBy(): PauseReason | undefined {
    if (this.handshaking()) return "handshake";
    if (!this.replies.admitsFrames()) return "replies";
    const now = performance.now();
    if (this.turnStarted === undefined) {
      this.turnStarted = now;
      setImmediate(() => (this.turnStarted = undefined));
    } else if (now - this.turnStarted >= TURN_BUDGET_MS) {
      return "turn";
    }
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
    // Replies: the outbound calls recheck() as it writes; handshake: the connection, once answered. The others pass with time.
    if (reason === "turn") this.retryImmediate ??= setImmediate(() => {
      this.retryImmediate = undefined;
      this.recheck();
    });
    if (reason === "rate" && this.retryTimer === undefined) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.recheck();
      }, Math.max(1, Math.ceil(this.rate.msUntilToken())));
    }
  }
}
