/**
 * Merges the small reads of one event-loop turn into one chunk. A PTY read
 * returns at most one kernel buffer (about 4 KiB); spawn-pty.ts reads on
 * after a full one, but what arrives between bursts still comes in small
 * reads, and numbering, retaining and sending each one costs more than the
 * bytes. A chunk never grows past the flow-control bound (`maxBytes`):
 * what would cross it goes out first. Chunks are held only until the end
 * of the current turn (setImmediate), so an echo is not delayed, and only
 * consecutive chunks of the same stream are merged, so stdout/stderr order
 * is kept.
 *
 * A pipe says when a read emptied it ("drained"): then nothing more of that
 * stream can come this turn, and the chunk goes out at once rather than after
 * the turn's other I/O callbacks (that hop was about 15 µs of a pipe echo's
 * round trip on a 2-core AMD EPYC VM, measured between the read and the flush).
 *
 * A read the spawner marks "more-waiting" (it was as large as the kernel hands
 * over at once, so the writer is ahead of the reader) is held past the end
 * of the turn, for the reads that follow it, up to HOLD_MS. A fast PTY writer
 * otherwise left as one 4 KiB frame per loop turn: on the 2-core AMD VM,
 * every read was flushed on its own (8,169 frames for 32 MiB), and the
 * socket write, the client's wake-up and its frame parsing for each one kept
 * PTY streaming at a quarter of a bare node-pty read loop. Any smaller read
 * ends the burst: it is sent at the end of its turn, as before.
 */
import type { OutputStream } from "@execmux/shared";
import type { ReadHint } from "./child.js";
import { releaseSlab, retainSlab } from "./slab-pool.js";

/** A merged chunk is emitted at once when it reaches this size. */
const MAX_MERGED_BYTES = 64 * 1024;
/**
 * The longest a full read waits for the next one. Not a speed setting: it
 * bounds the delay of a burst's last bytes when the burst happens to end on
 * a full read (the writer stopped just then and is still running).
 */
const HOLD_MS = 1;

export class OutputCoalescer {
  private stream: OutputStream | undefined;
  private parts: Buffer[] = [];
  private bytes = 0;
  private scheduled: NodeJS.Immediate | undefined;
  private held: NodeJS.Timeout | undefined;

  /** The most one merged chunk holds: MAX_MERGED_BYTES, or less under flow control (limitTo). */
  private maxBytes = MAX_MERGED_BYTES;

  constructor(private readonly emit: (stream: OutputStream, data: Buffer) => void) {}

  /** Flow control's bound on one chunk (a single read larger than it still goes out whole). */
  limitTo(bytes: number): void {
    this.maxBytes = Math.min(MAX_MERGED_BYTES, bytes);
  }

  push(stream: OutputStream, data: Buffer, read?: ReadHint): void {
    if (this.stream !== undefined && (this.stream !== stream || this.bytes + data.length > this.maxBytes)) this.flush();
    this.stream = stream;
    this.parts.push(data);
    retainSlab(data);
    this.bytes += data.length;
    if (read === "drained" || this.bytes >= this.maxBytes) this.flush();
    else if (read === "more-waiting" && this.scheduled === undefined) this.held ??= setTimeout(() => this.flush(), HOLD_MS);
    else this.scheduled ??= setImmediate(() => this.flush());
  }

  /** Emits what is held. Called before any other event of the process, to keep order. */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    if (this.held) clearTimeout(this.held);
    this.scheduled = undefined;
    this.held = undefined;
    const { stream, parts } = this;
    if (stream === undefined || parts.length === 0) return;
    this.stream = undefined;
    this.parts = [];
    this.bytes = 0;
    this.emit(stream, parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    for (const part of parts) releaseSlab(part);
  }
}
