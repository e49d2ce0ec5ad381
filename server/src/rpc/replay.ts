/**
 * Resume with cursors, paced by the socket. A client that resumes after
 * missing the output of many processes is owed all of it at once (256
 * processes with 1 MiB retained each, twice that in base64); encoding it
 * all into the send queues at once would hold a second copy of every
 * retained byte until the client took it. Instead each process's events
 * are fetched from the process host a batch at a time and sent one at a
 * time, round-robin across processes, and only while the connection has
 * room (its socket below the high-water mark, its reply budget not spent):
 * the rest follows as the socket drains.
 *
 * While a process is being replayed its live events are not sent: the host
 * keeps them too, after the ones being replayed, and the replay reaches
 * them in order. The host's answer to a read comes after every event it
 * produced before answering, so a replay that finds nothing more and has
 * heard of nothing newer has caught up: live events flow again from the
 * next one on, nothing sent twice nor skipped. The process is paused
 * meanwhile, as a process whose output the client is not taking is.
 */
import type { OutputGap } from "@execmux/shared";
import type { ManagedProcess, ProcessEvent } from "../process/managed-process.js";

export interface ReplaySink {
  /** True while the connection can take another frame without passing its bounds. */
  hasRoom(): boolean;
  /** True while a process's frames wait for the client's acknowledgements: none of its output is fetched meanwhile. */
  holds(process: ManagedProcess): boolean;
  sendGap(process: ManagedProcess, gap: OutputGap): void;
  sendEvent(process: ManagedProcess, event: ProcessEvent): void;
  /** A fetch failed (the host is gone): the connection's problem. */
  failed(error: unknown): void;
}

/** Output fetched from the host at a time for one process. */
export const BATCH_BYTES = 256 * 1024;
/**
 * Processes whose batch is fetched or being fetched, not yet all sent: the
 * replay holds at most this many batches (1 MiB) in the daemon. With a batch
 * for every owed process at once (50 processes: 12.5 MiB, and their frames),
 * a slow client's resume grew the daemon past 48 MiB on a loaded machine.
 */
const LOADED_BATCHES = 4;

interface ReplayCursor {
  readonly process: ManagedProcess;
  /** The last seq sent (or the client's cursor). */
  seq: number;
  /** The last seq a process/gap covered, so an eviction is reported once. */
  gapThrough: number;
  /** Fetched, not yet sent. */
  batch: ProcessEvent[];
  fetching: boolean;
}

export class Replay {
  /** Processes with events left to replay, in round-robin order. */
  private readonly pending: ReplayCursor[] = [];
  private readonly replaying = new Set<ManagedProcess>();
  /** Cursors with a batch fetched or on its way and not yet sent (at most LOADED_BATCHES). */
  private readonly loaded = new Set<ReplayCursor>();
  /** Sending a frame reports progress, which pumps again: that must not recurse. */
  private pumping = false;
  private closed = false;

  constructor(private readonly sink: ReplaySink) {}

  /** Replays every retained event of `process` after `cursor`. */
  add(process: ManagedProcess, cursor: number): void {
    if (this.replaying.has(process)) return;
    this.replaying.add(process);
    process.setPaused(this, true);
    this.pending.push({ process, seq: cursor, gapThrough: cursor, batch: [], fetching: false });
  }

  /** True while `process`'s live events must wait for its replay (which fetches them from the host). */
  covers(process: ManagedProcess): boolean {
    return this.replaying.has(process);
  }

  /** Sends what the connection has room for; called again whenever the socket made progress. */
  pump(): void {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    try {
      let turns = this.pending.length;
      while (turns-- > 0 && this.pending.length > 0 && this.sink.hasRoom()) {
        const cursor = this.pending.shift()!;
        if (this.sink.holds(cursor.process)) {
          this.pending.push(cursor);
          continue;
        }
        const event = cursor.batch.shift();
        if (event) {
          if (cursor.batch.length === 0) this.loaded.delete(cursor);
          this.sink.sendEvent(cursor.process, event);
          cursor.seq = event.seq;
          this.pending.push(cursor);
          turns = this.pending.length;
          continue;
        }
        this.pending.push(cursor);
        if (!cursor.fetching && this.loaded.size < LOADED_BATCHES) this.fetch(cursor);
      }
    } finally {
      this.pumping = false;
    }
  }

  /** The connection is gone: every process runs again. */
  close(): void {
    this.closed = true;
    for (const process of this.replaying) process.setPaused(this, false);
    this.replaying.clear();
    this.pending.length = 0;
    this.loaded.clear();
  }

  private fetch(cursor: ReplayCursor): void {
    cursor.fetching = true;
    this.loaded.add(cursor);
    const { process } = cursor;
    process.readEvents(cursor.seq, BATCH_BYTES).then(
      ({ events, gap, caughtUp }) => {
        if (this.closed || !this.replaying.has(process)) return;
        // In place before anything below sends a frame: a send pumps, and must find this batch, not fetch again.
        cursor.batch = events;
        cursor.fetching = false;
        if (events.length === 0) this.loaded.delete(cursor);
        if (gap && gap.toSeq > cursor.gapThrough) {
          cursor.gapThrough = gap.toSeq;
          this.sink.sendGap(process, gap);
        }
        if (caughtUp) this.finish(cursor);
        this.pump();
      },
      (error: unknown) => {
        cursor.fetching = false;
        this.loaded.delete(cursor);
        this.sink.failed(error);
      },
    );
  }

  private finish(cursor: ReplayCursor): void {
    this.loaded.delete(cursor);
    const index = this.pending.indexOf(cursor);
    if (index >= 0) this.pending.splice(index, 1);
    this.replaying.delete(cursor.process);
    cursor.process.setPaused(this, false);
  }
}
