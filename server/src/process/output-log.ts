/**
 * A process's retained output: chunks in seq order, the oldest evicted once
 * the total passes the cap. It also remembers enough about what it evicted to
 * tell a late reader exactly which seqs and how many bytes it missed.
 */
import type { OutputGap, OutputStream } from "@execmux/shared";
import { releaseSlab, retainSlab } from "./slab-pool.js";

export interface RetainedChunk {
  readonly seq: number;
  readonly stream: OutputStream;
  readonly data: Buffer;
  /** Bytes of output (all streams) produced before this chunk. */
  readonly startOffset: number;
  /** When it was retained, in ms after the log's `startedAtMs` (a small integer, kept unboxed). */
  readonly atMs: number;
}

/** How many evicted chunks' end offsets are remembered for exact gap reports. */
const LEDGER_CAPACITY = 4096;

/**
 * What a retained chunk costs beyond its bytes: its record, its Buffer view
 * and its slot, measured with --expose-gc (162 bytes of heap and 8 of
 * external memory for a 1-byte chunk; its time, `atMs`, added 9 bytes of
 * heap: 200,000 1-byte chunks, 162.7 then 171.6 bytes each). Charged with
 * every chunk, so a process writing one byte at a time retains at most its
 * cap of real memory (about 5,700 chunks in 1 MiB), not 180 times it.
 */
export const CHUNK_OVERHEAD_BYTES = 184;

/** Upstream's cap on retained chunks per process. */
export const MAX_RETAINED_CHUNKS = 50_000;

/** Where a log charges its memory (the daemon's retention budget). */
export interface RetentionCharge {
  charge(bytes: number): void;
}

const noCharge: RetentionCharge = { charge: () => undefined };

export class OutputLog {
  private chunks: RetainedChunk[] = [];
  /** Index of the oldest live entry in `chunks`; the array is compacted lazily. */
  private head = 0;
  private retained = 0;
  private produced = 0;
  private evictedChunks = 0;
  private readonly ledger = new EvictionLedger(LEDGER_CAPACITY);
  /** Wall-clock time the log began (Unix ms); chunk times count from here on a monotonic clock. */
  readonly startedAtMs = Date.now();
  private readonly startedAtTick = performance.now();

  /** `capBytes` counts each chunk's bytes plus CHUNK_OVERHEAD_BYTES. */
  constructor(
    private readonly capBytes: number,
    private readonly budget: RetentionCharge = noCharge,
    private readonly maxChunks = MAX_RETAINED_CHUNKS,
  ) {}

  /** Bytes of output retained (what a reader can still get). */
  get retainedBytes(): number {
    return this.retained;
  }

  /** Memory charged for what is retained: bytes plus the overhead of each chunk. */
  get chargedBytes(): number {
    return this.retained + this.count * CHUNK_OVERHEAD_BYTES;
  }

  private get count(): number {
    return this.chunks.length - this.head;
  }

  get isEmpty(): boolean {
    return this.head === this.chunks.length;
  }

  /** Seq of the oldest retained chunk, or undefined when nothing is retained. */
  get firstSeq(): number | undefined {
    return this.chunks[this.head]?.seq;
  }

  append(seq: number, stream: OutputStream, data: Buffer): void {
    this.chunks.push({ seq, stream, data, startOffset: this.produced, atMs: Math.round(performance.now() - this.startedAtTick) });
    retainSlab(data);
    this.produced += data.length;
    this.retained += data.length;
    let charged = data.length + CHUNK_OVERHEAD_BYTES;
    // The newest chunk is always kept, even over the cap: a reader must never
    // find the log empty right after a chunk was announced.
    while ((this.chargedBytes > this.capBytes || this.count > this.maxChunks) && this.count > 1) {
      charged -= this.evictOldest();
    }
    this.compact();
    // Last: the budget may evict from this very log.
    this.budget.charge(charged);
  }

  /**
   * Evicts the oldest chunks (never the newest) until at least `bytes` of
   * charge are freed or one chunk is left; returns what was freed. The
   * retention budget takes memory back this way.
   */
  evictOldestCharge(bytes: number): number {
    let freed = 0;
    while (freed < bytes && this.count > 1) freed += this.evictOldest();
    this.compact();
    this.budget.charge(-freed);
    return freed;
  }

  /** Lets every chunk go and gives their charge back: the process is forgotten. */
  dispose(): void {
    const charged = this.chargedBytes;
    for (let index = this.head; index < this.chunks.length; index++) releaseSlab(this.chunks[index]!.data);
    this.chunks = [];
    this.head = 0;
    this.retained = 0;
    this.budget.charge(-charged);
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /** Retained chunks with seq > afterSeq; the first is always included even
   * when it alone exceeds maxBytes (upstream's rule). */
  readAfter(afterSeq: number, maxBytes: number): RetainedChunk[] {
    const result: RetainedChunk[] = [];
    let total = 0;
    for (let index = this.indexAfter(afterSeq); index < this.chunks.length; index++) {
      const chunk = this.chunks[index]!;
      if (result.length > 0 && total + chunk.data.length > maxBytes) break;
      total += chunk.data.length;
      result.push(chunk);
      if (total >= maxBytes) break;
    }
    return result;
  }

  /** The oldest retained chunk with seq > afterSeq, for a replay that goes one chunk at a time. */
  firstAfter(afterSeq: number): RetainedChunk | undefined {
    return this.chunks[this.indexAfter(afterSeq)];
  }

  /** Every retained chunk with seq > afterSeq. */
  *chunksAfter(afterSeq: number): Iterable<RetainedChunk> {
    for (let index = this.indexAfter(afterSeq); index < this.chunks.length; index++) {
      yield this.chunks[index]!;
    }
  }

  /**
   * What a reader whose cursor is `afterSeq` can no longer get, or undefined
   * when nothing after the cursor was evicted. `exitSeq` is excluded from the
   * chunk count because exit events take a seq but are never evicted.
   */
  gapAfter(afterSeq: number, exitSeq: number | undefined): OutputGap | undefined {
    const first = this.chunks[this.head];
    if (this.evictedChunks === 0 || first === undefined || afterSeq + 1 >= first.seq) return undefined;
    const fromSeq = afterSeq + 1;
    const toSeq = first.seq - 1;
    // Seqs are dense, so every seq in the range was an output chunk except
    // possibly the exit event.
    const exitInRange = exitSeq !== undefined && exitSeq >= fromSeq && exitSeq <= toSeq;
    const chunks = toSeq - fromSeq + 1 - (exitInRange ? 1 : 0);
    const known = this.ledger.endOffsetThrough(afterSeq);
    return {
      fromSeq,
      toSeq,
      chunks,
      bytes: first.startOffset - known.endOffset,
      bytesExact: known.exact,
    };
  }

  /** Returns the charge freed. */
  private evictOldest(): number {
    const oldest = this.chunks[this.head]!;
    this.chunks[this.head] = undefined as unknown as RetainedChunk; // let the buffer go
    releaseSlab(oldest.data);
    this.head++;
    this.retained -= oldest.data.length;
    this.evictedChunks++;
    this.ledger.record(oldest.seq, oldest.startOffset + oldest.data.length);
    return oldest.data.length + CHUNK_OVERHEAD_BYTES;
  }

  /** Index of the first retained chunk with seq > afterSeq (binary search). */
  private indexAfter(afterSeq: number): number {
    let low = this.head;
    let high = this.chunks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.chunks[mid]!.seq <= afterSeq) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/**
 * (seq, end offset) of the most recently evicted chunks in a fixed ring, plus
 * the last entry that fell out of it. Memory stays bounded however long a
 * process runs; only a cursor older than the ring gets a lower bound.
 */
class EvictionLedger {
  private seqs: Float64Array | undefined;
  private ends: Float64Array | undefined;
  private start = 0;
  private length = 0;
  private droppedSeq = -1;
  private droppedEnd = 0;
  /** Seq of the first chunk ever evicted: a cursor before it lost everything evicted. */
  private firstSeq = -1;

  constructor(private readonly capacity: number) {}

  record(seq: number, endOffset: number): void {
    if (this.firstSeq < 0) this.firstSeq = seq;
    this.seqs ??= new Float64Array(this.capacity);
    this.ends ??= new Float64Array(this.capacity);
    if (this.length === this.capacity) {
      this.droppedSeq = this.seqs[this.start]!;
      this.droppedEnd = this.ends[this.start]!;
      this.start = (this.start + 1) % this.capacity;
      this.length--;
    }
    const slot = (this.start + this.length) % this.capacity;
    this.seqs[slot] = seq;
    this.ends[slot] = endOffset;
    this.length++;
  }

  /** Output bytes produced up to and including seq `cursor`, as far as evicted chunks tell. */
  endOffsetThrough(cursor: number): { endOffset: number; exact: boolean } {
    const seqs = this.seqs;
    const ends = this.ends;
    if (!seqs || !ends || cursor < this.firstSeq) return { endOffset: 0, exact: true };
    let low = 0;
    let high = this.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (seqs[(this.start + mid) % this.capacity]! <= cursor) low = mid + 1;
      else high = mid;
    }
    if (low > 0) return { endOffset: ends[(this.start + low - 1) % this.capacity]!, exact: true };
    if (this.droppedSeq < 0) return { endOffset: 0, exact: true };
    if (cursor >= this.droppedSeq) return { endOffset: this.droppedEnd, exact: true };
    return { endOffset: this.droppedEnd, exact: false };
  }
}
