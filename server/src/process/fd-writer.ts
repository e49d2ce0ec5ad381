import { writeSync } from "node:fs";

/** Longest wait between retries while the child reads none of its input. */
const MAX_RETRY_MS = 20;

/**
 * Ordered writes to a non-blocking file descriptor (a PTY master).
 *
 * Written synchronously: on a non-blocking fd that never blocks, and a
 * keystroke reaches the child at once instead of after a round trip through
 * libuv's thread pool (which, on a busy machine, was most of a PTY echo's
 * latency). What the kernel cannot take now (EAGAIN, or a partial write)
 * waits here: retried on the next turn while the child keeps reading, then
 * with a growing delay, so a child that stops reading costs no CPU.
 */
export class FdWriter {
  private readonly queue: { data: Buffer; offset: number }[] = [];
  /** Bytes queued and not yet taken by the kernel (callers bound this). */
  private queued = 0;
  private closed = false;
  private retryMs = 0;
  private retry: NodeJS.Immediate | NodeJS.Timeout | undefined;

  constructor(
    private readonly fd: number,
    private readonly onError: (error: NodeJS.ErrnoException) => void,
  ) {}

  get queuedBytes(): number {
    return this.queued;
  }

  private readonly belowWaiters = new Set<{ bytes: number; resolve(): void }>();

  /** Resolves once at most `bytes` are queued, or the writer is closed. */
  whenBelow(bytes: number): Promise<void> {
    if (this.closed || this.queued <= bytes) return Promise.resolve();
    return new Promise((resolve) => this.belowWaiters.add({ bytes, resolve }));
  }

  private wakeWaiters(): void {
    for (const waiter of this.belowWaiters) {
      if (!this.closed && this.queued > waiter.bytes) continue;
      this.belowWaiters.delete(waiter);
      waiter.resolve();
    }
  }

  write(data: Buffer): void {
    if (this.closed || data.length === 0) return;
    this.queue.push({ data, offset: 0 });
    this.queued += data.length;
    if (this.queue.length === 1) this.flush();
  }

  /** Drops what is queued; the fd is about to be closed by its owner. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.queued = 0;
    this.wakeWaiters();
    clearImmediate(this.retry as NodeJS.Immediate);
    clearTimeout(this.retry as NodeJS.Timeout);
  }

  private flush(): void {
    this.retry = undefined;
    let progressed = false;
    for (let task = this.queue[0]; task && !this.closed; task = this.queue[0]) {
      let written: number;
      try {
        written = writeSync(this.fd, task.data, task.offset, task.data.length - task.offset);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EAGAIN") break;
        this.close();
        this.onError(error as NodeJS.ErrnoException);
        return;
      }
      progressed ||= written > 0;
      task.offset += written;
      this.queued -= written;
      if (task.offset < task.data.length) break; // the kernel buffer is full
      this.queue.shift();
    }
    if (progressed) this.wakeWaiters();
    if (this.closed || this.queue.length === 0) {
      this.retryMs = 0;
      return;
    }
    if (progressed) {
      this.retryMs = 0;
      this.retry = setImmediate(() => this.flush());
    } else {
      this.retryMs = Math.min(MAX_RETRY_MS, Math.max(1, this.retryMs * 2));
      this.retry = setTimeout(() => this.flush(), this.retryMs);
    }
  }
}
