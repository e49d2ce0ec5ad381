/**
 * Where a pipe child's output is read into: buffers with room in front for a
 * binary frame's header (see shared/src/binary-frame.ts), so that a large
 * chunk goes out as a frame without being copied, and without Node
 * allocating and zero-filling a fresh 64 KiB for every read (in a profile of
 * bench section 1, a 256 MiB stream, that copy and that fill were the
 * daemon's largest costs outside the kernel).
 *
 * When a read fills the pipe's whole capacity, the pipe is read on at once
 * into the same buffer, so a fast writer's output leaves in chunks of up to
 * 256 KiB instead of 64 KiB: each chunk costs the daemon and the client the
 * same whatever its size (numbering, retaining, a frame).
 *
 * Slabs come from slab-pool.ts and go back there once nothing holds their
 * bytes any more.
 */
import { readSync } from "node:fs";
import { Socket, type OnReadOpts, type SocketConstructorOpts } from "node:net";
import { BINARY_HEADER_BYTES, ProcessIdSchema } from "@execmux/shared";
import { deepenPipe } from "./deep-pipes.js";
import { releaseSlab, takeSlab } from "./slab-pool.js";

/**
 * Read buffer sizes for quiet pipes: a read that fills its buffer moves the
 * next one up a size (past the last, to a slab), a read smaller than the
 * smallest moves it back down. An idle or interactive pipe holds a few
 * hundred bytes. Their reads are copied out, so retained output never pins
 * much more memory than its own size.
 */
const SMALL_READ_SIZES = [256, 4 * 1024] as const;
/** A pipe's capacity: a read this full means more may be waiting. */
const PIPE_READ_BYTES = 64 * 1024;
/** The most one chunk merges (four reads of a full pipe). */
const BURST_BYTES = 4 * PIPE_READ_BYTES;
/** The largest header: a processId of the longest length, every character 4 bytes of UTF-8. */
const HEADROOM_BYTES = BINARY_HEADER_BYTES + 4 * (ProcessIdSchema.maxLength ?? 256);
/**
 * A streaming pipe reads into slabs: chunk after chunk, each with its own
 * headroom, until less than a pipe read fits. Retained chunks pin their
 * slab, and at least two thirds of a slab given up hold chunks, so a
 * process pins at most half again what it retains, plus two slabs (the one
 * being filled, and one partly evicted).
 */
const SLAB_BYTES = HEADROOM_BYTES + BURST_BYTES;
/** A chunk read into a slab smaller than this is copied out (its headroom would cost too much). */
const KEEP_BYTES = 16 * 1024;

/** Chunks that have HEADROOM_BYTES in front of them which no one else uses. */
const withHeadroom = new WeakSet<Buffer>();

/**
 * A non-blocking read end as a Socket that emits "data" as usual, read with
 * `onread` into buffers with headroom. Node asks for the next buffer as soon
 * as a read is done, so an idle pipe holds one (a small one, see
 * SMALL_READ_SIZES).
 */
export class PipeReadEnd extends Socket {
  // "data" has a second argument: true when the read emptied the pipe (a read shorter than its buffer).
  /**
   * The most one chunk merges (at least one read, whatever this says, and
   * never more than BURST_BYTES). Flow control sets it once it knows the
   * client (binary frames or JSON, the credit window); until then, one read.
   */
  maxChunkBytes = PIPE_READ_BYTES;

  constructor(fd: number) {
    const reader: SlabReader = new SlabReader(fd, (chunk, drained) => this.emit("data", chunk, drained), () => this.maxChunkBytes);
    // Node 20 takes `onread` here too, though its types list it only for connect().
    const options: SocketConstructorOpts & { onread: OnReadOpts } = {
      fd,
      readable: true,
      writable: false,
      onread: { buffer: () => reader.nextBuffer(), callback: (bytes: number) => reader.read(bytes) },
    };
    super(options);
    reader.onFull = () => {
      const release = deepenPipe(fd);
      if (release) this.once("close", release);
    };
  }
}

/** The buffers of one read end, and the chunks read into them. */
class SlabReader {
  private small: Buffer | undefined;
  private smallSize: number | undefined = 0;
  private slab: Buffer | undefined;
  /** Where the chunk being read into the slab starts (its headroom is in front) and ends. */
  private start = 0;
  private end = 0;
  /** Told the first time a read fills the pipe (deep-pipes.ts). */
  onFull: (() => void) | undefined;

  constructor(
    private readonly fd: number,
    /** `drained`: the read was shorter than its buffer, so the pipe is empty now. */
    private readonly emit: (chunk: Buffer, drained: boolean) => void,
    private readonly maxChunkBytes: () => number,
  ) {}

  nextBuffer(): Buffer {
    if (this.smallSize !== undefined) return (this.small ??= Buffer.allocUnsafeSlow(SMALL_READ_SIZES[this.smallSize]!));
    if (!this.slab) {
      this.slab = takeSlab(SLAB_BYTES);
      this.start = this.end = HEADROOM_BYTES;
    }
    return this.slab.subarray(this.end, this.end + PIPE_READ_BYTES);
  }

  /** `bytes` were read into the last buffer handed out. */
  read(bytes: number): boolean {
    if (this.smallSize !== undefined) {
      const read = this.small!;
      const chunk = Buffer.from(read.subarray(0, bytes));
      if (bytes === read.length) this.grow();
      else if (bytes < SMALL_READ_SIZES[0]) this.shrink();
      this.emit(chunk, bytes < read.length);
      return true;
    }
    const slab = this.slab!;
    if (bytes === PIPE_READ_BYTES && this.onFull) {
      this.onFull();
      this.onFull = undefined;
    }
    this.end += bytes;
    const limit = Math.min(slab.length, this.start + Math.min(BURST_BYTES, this.maxChunkBytes()));
    // Read on here rather than let libuv do it: its next read would go into
    // a buffer handed out before this chunk ends, with no room for a header.
    while (bytes === PIPE_READ_BYTES && this.end + PIPE_READ_BYTES <= limit) {
      bytes = readNonBlocking(this.fd, slab, this.end, PIPE_READ_BYTES);
      this.end += bytes;
    }
    this.flush(slab, bytes < PIPE_READ_BYTES);
    return true;
  }

  private flush(slab: Buffer, drained: boolean): void {
    const bytes = this.end - this.start;
    let chunk: Buffer;
    if (bytes >= KEEP_BYTES) {
      chunk = slab.subarray(this.start, this.end);
      withHeadroom.add(chunk);
      this.start = this.end = this.end + HEADROOM_BYTES;
      if (this.end + PIPE_READ_BYTES > slab.length) this.slab = undefined;
    } else {
      chunk = Buffer.from(slab.subarray(this.start, this.end));
      this.end = this.start;
      if (bytes < SMALL_READ_SIZES[0]) this.shrink();
    }
    // The reader's hold on a slab it has left ends only now: whoever keeps
    // the chunk has retained it during emit.
    this.emit(chunk, drained);
    if (this.slab !== slab) releaseSlab(slab);
  }

  private grow(): void {
    this.small = undefined;
    this.smallSize = this.smallSize! + 1 < SMALL_READ_SIZES.length ? this.smallSize! + 1 : undefined;
  }

  private shrink(): void {
    if (this.smallSize === 0) return;
    this.small = undefined;
    this.slab = undefined;
    this.smallSize = 0;
  }
}

/**
 * Bytes read; 0 when there are none yet (EAGAIN), none any more (EOF) or the
 * read failed: libuv's own next read reports the last two as usual.
 */
export function readNonBlocking(fd: number, buffer: Buffer, offset: number, length: number): number {
  try {
    return readSync(fd, buffer, offset, length, null);
  } catch {
    return 0;
  }
}

/**
 * A pooled slab (slab-pool.ts) of `bytes` with a frame header's room in
 * front, for readers other than pipes (spawn-pty.ts): the part to read
 * into, held once by the caller. A chunk of it passed to `withFrameRoom`
 * goes out as a binary frame in place, like a pipe's.
 */
export function takeFramedSlab(bytes: number): Buffer {
  return takeSlab(HEADROOM_BYTES + bytes).subarray(HEADROOM_BYTES);
}

/** `chunk`, which must start at the beginning of a takeFramedSlab buffer, marked as having its headroom. */
export function withFrameRoom(chunk: Buffer): Buffer {
  withHeadroom.add(chunk);
  return chunk;
}

/**
 * `chunk` with `headerBytes` of its headroom in front, as one buffer, or
 * undefined when it has none (the header then has to be copied together with
 * the chunk). The caller writes the header into the first `headerBytes`; a
 * chunk sent again (a replay) gets the same header, so a frame still waiting
 * in a socket's buffer is not changed by that.
 */
export function frameAround(chunk: Buffer, headerBytes: number): Buffer | undefined {
  if (!withHeadroom.has(chunk) || headerBytes > HEADROOM_BYTES) return undefined;
  return Buffer.from(chunk.buffer, chunk.byteOffset - headerBytes, headerBytes + chunk.length);
}
