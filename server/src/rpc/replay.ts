/**
 * Resume with cursors, paced by the socket. A client that resumes after
 * missing the output of many processes is owed all of it at once (256
 * processes with 1 MiB retained each, twice that in base64); encoding it
 * all into the send queues at once would hold a second copy of every
 * retained byte until the client took it. Instead each process's events
 * are read from its log one at a time, round-robin across processes, and
 * only while the connection has room (its socket below the high-water mark,
 * its reply budget not spent): the rest follows as the socket drains.
 *
 * While a process is being replayed its live events are not sent: they are
 * in its log too, after the ones being replayed, and the replay reaches
 * them in order. Once a replay has caught up with its process, live events
 * flow again; that switch happens within one turn of the event loop, so
 * nothing is sent twice nor skipped. The process is paused meanwhile, as a
 * process whose output the client is not taking is.
 */
import type { OutputGap } from "@execmux/shared";
import type { ManagedProcess, ProcessEvent } from "../process/managed-process.js";

export interface ReplaySink {
  /** True while the connection can take another frame without passing its bounds. */
  hasRoom(): boolean;
  sendGap(process: ManagedProcess, gap: OutputGap): void;
  sendEvent(process: ManagedProcess, event: ProcessEvent): void;
}

interface ReplayCursor {
  readonly process: ManagedProcess;
  /** The last seq sent (or the client's cursor). */
  seq: number;
  /** The last seq a process/gap covered, so an eviction is reported once. */
  gapThrough: number;
}

export class Replay {
  /** Processes with events left to replay, in round-robin order. */
  private readonly pending: ReplayCursor[] = [];
  private readonly replaying = new Set<ManagedProcess>();
  /** Sending a frame reports progress, which pumps again: that must not recurse. */
  private pumping = false;

  constructor(private readonly sink: ReplaySink) {}

  /** Replays every retained event of `process` after `cursor`. */
  add(process: ManagedProcess, cursor: number): void {
    if (this.replaying.has(process)) return;
    this.replaying.add(process);
    process.setPaused(this, true);
    this.pending.push({ process, seq: cursor, gapThrough: cursor });
  }

  /** True while `process`'s live events must wait for its replay (which reads them from the log). */
  covers(process: ManagedProcess): boolean {
    return this.replaying.has(process);
  }

  /** Sends what the connection has room for; called again whenever the socket made progress. */
  pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.pending.length > 0 && this.sink.hasRoom()) {
        const cursor = this.pending.shift()!;
        if (this.step(cursor)) this.pending.push(cursor);
        else this.finish(cursor.process);
      }
    } finally {
      this.pumping = false;
    }
  }

  /** The connection is gone: every process runs again. */
  close(): void {
    for (const process of this.replaying) process.setPaused(this, false);
    this.replaying.clear();
    this.pending.length = 0;
  }

  /** Sends the process's next event, after a gap if output was evicted past the cursor; false once it has caught up. */
  private step(cursor: ReplayCursor): boolean {
    const { process } = cursor;
    const gap = process.gapAfter(cursor.seq);
    if (gap && gap.toSeq > cursor.gapThrough) {
      this.sink.sendGap(process, gap);
      cursor.gapThrough = gap.toSeq;
    }
    const event = process.eventAfter(cursor.seq);
    if (!event) return false;
    this.sink.sendEvent(process, event);
    cursor.seq = event.seq;
    return true;
  }

  private finish(process: ManagedProcess): void {
    this.replaying.delete(process);
    process.setPaused(this, false);
  }
}
