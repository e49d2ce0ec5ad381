/**
 * Everything the daemon sends on one socket goes through here. Replies go
 * first; process output is sent round-robin across processes, one frame at a
 * time, and only while the socket's own buffer is below the high-water mark.
 * So a process flooding output cannot put its megabytes ahead of another
 * process's keystroke echo, and a slow client pauses the producers (they
 * block on write) instead of growing the daemon's memory.
 */
import type { Metrics } from "../metrics.js";
import type { ManagedProcess } from "../process/managed-process.js";
import { releaseSlab, retainSlab } from "../process/slab-pool.js";
import { Utf8Text, type MessageTransport, type OutgoingMessage } from "./transport.js";

export interface OutboundLimits {
  /** Stop handing frames to the socket while it buffers more than this. */
  readonly socketHighWaterBytes: number;
  /** Pause a process once this much of its output waits here. */
  readonly processQueueBytes: number;
  /** Credit window per process while the socket is shared (see `sharedUntil`). */
  readonly sharedAckWindowBytes: number;
}

/** The socket counts as shared this long after output of two processes interleaved. */
const SHARED_FOR_MS = 100;
/**
 * The largest chunk for a JSON client: with 256 KiB chunks, JSON-mode
 * streaming was a third slower than with 64 KiB (bench section 1, about 277
 * against 414 MiB/s in interleaved runs), where binary mode gained.
 */
export const JSON_CHUNK_BYTES = 64 * 1024;

interface QueuedFrame {
  readonly frame: OutgoingMessage;
  readonly bytes: number;
  /**
   * The frame's bytes when they are in a pooled slab (binary output sent
   * where it was read, a large JSON output frame), held until the socket has
   * written them.
   */
  readonly slab: Buffer | undefined;
}

interface ProcessQueue {
  readonly frames: QueuedFrame[];
  queuedBytes: number;
  unackedBytes: number;
  /** Out of the round-robin until the client acknowledges: it has its window's worth unacknowledged. */
  held: boolean;
}

/** A reply or other frame that is not process output; `written` runs once the socket wrote it, or dropped it. */
interface ControlFrame {
  readonly frame: OutgoingMessage;
  readonly written: (() => void) | undefined;
}

export class Outbound {
  private readonly control: ControlFrame[] = [];
  /** Bytes (UTF-16 units for strings: close enough for a bound) in `control`. */
  private controlBytes = 0;
  private readonly queues = new Map<ManagedProcess, ProcessQueue>();
  /** Processes with frames waiting, in round-robin order. */
  private readonly ready: ManagedProcess[] = [];
  private closed = false;
  /** Credit flow control: pause a process with this many bytes sent but not
   * acknowledged by the client (undefined: off, the default). */
  private ackWindowBytes: number | undefined;
  /** The window while the socket is shared: never more than the client's own. */
  private sharedAckWindowBytes: number | undefined;
  /**
   * A process alone on the socket gets the client's whole window: deep
   * buffers are what make a single stream fast. Once output of another
   * process interleaves with it, every process gets the (smaller) shared
   * window until the socket has been single-process again for a while, so
   * a keystroke's echo never waits behind more than that much of a flood.
   */
  private sharedUntil = 0;
  private lastSender: ManagedProcess | undefined;
  private maxChunkBytes = JSON_CHUNK_BYTES;
  private readonly onSent = () => this.pump();
  /** Producers (HTTP body streams) waiting for the socket to drain below its high-water mark. */
  private writableWaiters: (() => void)[] = [];
  /** Told after every chance to send: queued replies may have gone out (the inbound gate rechecks). */
  onProgress: () => void = () => undefined;

  constructor(
    private readonly socket: MessageTransport,
    private readonly limits: OutboundLimits,
    private readonly metrics: Metrics,
  ) {}

  /**
   * Replies and other frames that are not process output: sent before any
   * queued output. `written` runs once the socket has written the frame, or
   * once it is dropped (the socket closed first).
   */
  sendControl(frame: OutgoingMessage, written?: () => void): void {
    if (this.closed) {
      written?.();
      return;
    }
    this.control.push({ frame, written });
    this.controlBytes += frame.length;
    this.pump();
  }

  /** Replies queued here plus everything the socket has not written yet: what the client still has to take. */
  get unsentBytes(): number {
    return this.controlBytes + this.socket.bufferedAmount;
  }

  /** A frame of one process (output, exit, close, gap): kept in order per process. `bytes` counts output bytes. */
  sendProcessFrame(process: ManagedProcess, frame: OutgoingMessage, bytes: number): void {
    if (this.closed) return;
    const queue = this.queueOf(process);
    if (queue.frames.length === 0) this.ready.push(process);
    const frameBytes = frame instanceof Utf8Text ? frame.bytes : Buffer.isBuffer(frame) ? frame : undefined;
    queue.frames.push({ frame, bytes, slab: frameBytes && retainSlab(frameBytes) ? frameBytes : undefined });
    queue.queuedBytes += bytes;
    this.updatePause(process, queue);
    this.pump();
  }

  /** Turns credit flow control on; returns the windows the client must ack within. */
  enableAcks(windowBytes: number): { ackWindowBytes: number; sharedAckWindowBytes: number } {
    this.ackWindowBytes = windowBytes;
    this.sharedAckWindowBytes = Math.min(windowBytes, this.limits.sharedAckWindowBytes);
    return { ackWindowBytes: windowBytes, sharedAckWindowBytes: this.sharedAckWindowBytes };
  }

  /** Output goes out as binary frames, which any chunk size suits. */
  allowLargeChunks(): void {
    this.maxChunkBytes = Number.POSITIVE_INFINITY;
  }

  /** The client consumed `bytes` of a process's output (credit flow control). */
  ack(process: ManagedProcess, bytes: number): void {
    const queue = this.queues.get(process);
    if (!queue) return;
    queue.unackedBytes = Math.max(0, queue.unackedBytes - bytes);
    this.updatePause(process, queue);
    if (queue.held && !this.overWindow(queue)) {
      queue.held = false;
      this.ready.push(process);
      this.pump();
    }
  }

  /** True while a process's frames wait for the client's acknowledgements (credit flow control). */
  holds(process: ManagedProcess): boolean {
    return this.queues.get(process)?.held === true;
  }

  /** Resolves once nothing waits here and the socket buffers less than its high-water mark (or it closed). */
  whenWritable(): Promise<void> {
    if (this.closed || this.writable) return Promise.resolve();
    return new Promise((resolve) => this.writableWaiters.push(resolve));
  }

  /** Nothing waits here and the socket buffers less than its high-water mark. */
  get writable(): boolean {
    return this.control.length === 0 && this.socket.bufferedAmount < this.limits.socketHighWaterBytes;
  }

  private wakeWriters(): void {
    if (this.writableWaiters.length === 0 || !(this.closed || this.writable)) return;
    const waiters = this.writableWaiters;
    this.writableWaiters = [];
    for (const wake of waiters) wake();
  }

  /** The socket is gone: drop what is queued and let every process run again. */
  close(): void {
    this.closed = true;
    this.wakeWriters();
    for (const { written } of this.control.splice(0)) written?.();
    this.controlBytes = 0;
    this.ready.length = 0;
    for (const [process, queue] of this.queues) {
      process.setPaused(this, false);
      for (const { slab } of queue.frames) if (slab) releaseSlab(slab);
    }
    this.queues.clear();
    this.lastSender = undefined;
  }

  private queueOf(process: ManagedProcess): ProcessQueue {
    let queue = this.queues.get(process);
    if (!queue) {
      queue = { frames: [], queuedBytes: 0, unackedBytes: 0, held: false };
      this.queues.set(process, queue);
    }
    return queue;
  }

  private pump(): void {
    const socket = this.socket;
    while (!this.closed && socket.isOpen && socket.bufferedAmount < this.limits.socketHighWaterBytes) {
      const control = this.control.shift();
      if (control !== undefined) {
        this.controlBytes -= control.frame.length;
        const { written } = control;
        socket.send(control.frame, written ? () => (written(), this.onSent()) : this.onSent);
        this.metrics.framesSent.inc("reply");
        continue;
      }
      const process = this.ready.shift();
      if (!process) break;
      const queue = this.queues.get(process)!;
      // Nothing past the client's window, whatever the process host had read
      // before the pause reached it: back in the round-robin on an ack.
      if (this.overWindow(queue)) {
        queue.held = true;
        continue;
      }
      const next = queue.frames.shift()!;
      if (process !== this.lastSender) {
        if (this.lastSender !== undefined) this.sharedUntil = performance.now() + SHARED_FOR_MS;
        this.lastSender = process;
      }
      queue.queuedBytes -= next.bytes;
      if (this.ackWindowBytes !== undefined) queue.unackedBytes += next.bytes;
      if (queue.frames.length > 0) this.ready.push(process);
      this.updatePause(process, queue);
      socket.send(next.frame, next.slab ? this.releaseWhenSent(next.slab) : this.onSent);
      this.metrics.framesSent.inc(Buffer.isBuffer(next.frame) ? "binary_output" : "notification");
    }
    this.wakeWriters();
    this.onProgress();
  }

  /** The transport calls a send's callback once it has written the frame, or failed to. */
  private releaseWhenSent(frame: Buffer): () => void {
    return () => {
      releaseSlab(frame);
      this.pump();
    };
  }

  private currentAckWindow(): number | undefined {
    return this.sharedUntil > 0 && performance.now() < this.sharedUntil ? this.sharedAckWindowBytes : this.ackWindowBytes;
  }

  /** Credit flow control: the client has a window's worth of this process's output unacknowledged. */
  private overWindow(queue: ProcessQueue): boolean {
    const window = this.currentAckWindow();
    return window !== undefined && queue.unackedBytes >= window;
  }

  /** Pause past the limits, resume below half of them (hysteresis, so it does not flap). */
  private updatePause(process: ManagedProcess, queue: ProcessQueue): void {
    const { processQueueBytes } = this.limits;
    const ackWindowBytes = this.currentAckWindow();
    // A chunk never larger than what pauses the process, nor than a quarter of its credit.
    const creditChunk = ackWindowBytes === undefined ? Number.POSITIVE_INFINITY : Math.floor(ackWindowBytes / 4);
    process.limitChunks(Math.min(processQueueBytes, creditChunk, this.maxChunkBytes));
    const over = queue.queuedBytes > processQueueBytes || (ackWindowBytes !== undefined && queue.unackedBytes > ackWindowBytes);
    const under =
      queue.queuedBytes <= processQueueBytes / 2 && (ackWindowBytes === undefined || queue.unackedBytes <= ackWindowBytes / 2);
    if (over && !process.isPausedBy(this)) {
      process.setPaused(this, true);
      this.metrics.flowControlPauses.inc();
    }
    else if (under) process.setPaused(this, false);
    // A closed process produces nothing more: once its last frame is out, its
    // credit no longer matters (the client may never ack its last bytes).
    if (queue.frames.length === 0 && process.closed) {
      process.setPaused(this, false);
      this.queues.delete(process);
    }
  }
}
