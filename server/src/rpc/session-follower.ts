/**
 * An observer's view of a session: every process, from the start of its
 * retained output (or the observer's cursor) and then live, read from the
 * process host a batch at a time at the pace of the observer's socket.
 *
 * The owner's connection paces a process by pausing it (flow control); an
 * observer never does. It keeps a cursor per process (and at most one
 * fetched batch) and sends the next event after it while its connection
 * has room (its socket below the high-water mark, its reply budget not
 * spent), round-robin across processes. A live event only wakes it: what
 * to send is always read from the host, after the cursor. An observer that falls behind
 * loses nothing but output the log evicted meanwhile, and hears of that as
 * a `process/gap` (fromSeq, toSeq, chunks, bytes), exactly as a resume
 * would. So however slow an observer is, it costs the owner and the other
 * observers nothing, and it holds no more than one frame beyond its
 * socket's bound.
 */
import type { OutputGap } from "@execmux/shared";
import type { ManagedProcess, ProcessEvent } from "../process/managed-process.js";
import { BATCH_BYTES } from "./replay.js";
import type { SessionObserver } from "../session/session.js";

export interface FollowerSink {
  /** True while the connection can take another frame without passing its bounds. */
  hasRoom(): boolean;
  /** `process/started`, once per process, before any of its events. */
  sendStarted(process: ManagedProcess): void;
  sendGap(process: ManagedProcess, gap: OutputGap): void;
  sendEvent(process: ManagedProcess, event: ProcessEvent): void;
  /** The session ended: the connection closes. */
  ended(): void;
}

interface FollowCursor {
  readonly process: ManagedProcess;
  /** The last seq sent (or the observer's own cursor). */
  seq: number;
  /** The last seq a process/gap covered, so an eviction is reported once. */
  gapThrough: number;
  announced: boolean;
  /** In `ready`: it may have something to send. */
  queued: boolean;
  /** Fetched from the host, not yet sent. */
  batch: ProcessEvent[];
  fetching: boolean;
  /** The process's next seq when a fetch last found nothing: fetched again only once something newer is heard. */
  emptyAt: number;
}

/**
 * Processes one observer follows at once. A session holds at most a few
 * hundred (--max-processes-per-session and the closed ones it keeps), but
 * an observer far behind still follows processes the session has forgotten
 * until it has sent their close: past this, the oldest closed one is
 * dropped (its observer misses the rest of it).
 */
const MAX_FOLLOWED = 4096;

export class SessionFollower implements SessionObserver {
  private readonly cursors = new Map<ManagedProcess, FollowCursor>();
  /** Cursors that may have something to send, in round-robin order. */
  private readonly ready: FollowCursor[] = [];
  /** Sending a frame reports progress, which pumps again: that must not recurse. */
  private pumping = false;
  private stopped = false;

  constructor(private readonly sink: FollowerSink) {}

  /** Follows `process` from `cursor` (0: its whole retained output). */
  follow(process: ManagedProcess, cursor = 0): void {
    if (this.stopped || this.cursors.has(process)) return;
    // Followed to its close already (an observer back after a drop): nothing to announce or send.
    if (process.closed && cursor >= process.nextSeq - 1) return;
    if (this.cursors.size >= MAX_FOLLOWED) this.dropOldestClosed();
    const entry: FollowCursor = { process, seq: cursor, gapThrough: cursor, announced: false, queued: false, batch: [], fetching: false, emptyAt: 0 };
    this.cursors.set(process, entry);
    this.wake(entry);
  }

  processStarted(process: ManagedProcess): void {
    this.follow(process);
    this.pump();
  }

  processEvent(process: ManagedProcess, _event: ProcessEvent): void {
    const entry = this.cursors.get(process);
    if (!entry) return;
    this.wake(entry);
    this.pump();
  }

  sessionEnded(): void {
    this.stop();
    this.sink.ended();
  }

  /** The connection is gone: nothing more is sent. */
  stop(): void {
    this.stopped = true;
    this.cursors.clear();
    this.ready.length = 0;
  }

  /** Sends what the connection has room for; called again whenever its socket made progress. */
  pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.stopped && this.ready.length > 0 && this.sink.hasRoom()) {
        const entry = this.ready.shift()!;
        if (this.step(entry)) this.ready.push(entry);
        else entry.queued = false;
      }
    } finally {
      this.pumping = false;
    }
  }

  private dropOldestClosed(): void {
    for (const [process, entry] of this.cursors) {
      if (!process.closed) continue;
      this.cursors.delete(process);
      const index = this.ready.indexOf(entry);
      if (index >= 0) this.ready.splice(index, 1);
      return;
    }
  }

  private wake(entry: FollowCursor): void {
    if (entry.queued) return;
    entry.queued = true;
    this.ready.push(entry);
  }

  /** Sends the process's next frame; false once it has nothing to send now (a fetch or a live event wakes it). */
  private step(entry: FollowCursor): boolean {
    const { process } = entry;
    if (!entry.announced) {
      entry.announced = true;
      this.sink.sendStarted(process);
      return true;
    }
    const event = entry.batch.shift();
    if (event) {
      this.sink.sendEvent(process, event);
      entry.seq = event.seq;
      // Its close is its last event: nothing more to follow.
      if (event.kind === "closed") this.cursors.delete(process);
      return event.kind !== "closed";
    }
    const more = process.nextSeq - 1 > entry.seq && process.nextSeq > entry.emptyAt;
    if (more && !entry.fetching) this.fetch(entry);
    return false;
  }

  private fetch(entry: FollowCursor): void {
    entry.fetching = true;
    const { process } = entry;
    const askedAt = process.nextSeq;
    process.readEvents(entry.seq, BATCH_BYTES).then(
      ({ events, gap }) => {
        entry.fetching = false;
        if (this.stopped || this.cursors.get(process) !== entry) return;
        if (gap && gap.toSeq > entry.gapThrough) {
          entry.gapThrough = gap.toSeq;
          this.sink.sendGap(process, gap);
        }
        entry.batch = events.filter((fetched) => fetched.seq > entry.seq);
        if (entry.batch.length === 0) {
          // Nothing retained after the cursor: the host forgot the process, or its events are on their way.
          if (process.hostHandle === undefined) {
            this.cursors.delete(process);
            return;
          }
          entry.emptyAt = askedAt;
        }
        this.wake(entry);
        this.pump();
      },
      () => {
        // The host forgot it meanwhile: there is nothing more of it to follow.
        entry.fetching = false;
        this.cursors.delete(process);
      },
    );
  }
}
