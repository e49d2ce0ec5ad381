import { write } from "node:fs";

/**
 * Ordered writes to a non-blocking file descriptor (a PTY master). A full
 * kernel buffer (EAGAIN) is retried on the next turn of the event loop rather
 * than blocking it, as node-pty's own writer does.
 */
export class FdWriter {
  private readonly queue: { data: Buffer; offset: number }[] = [];
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly onError: (error: NodeJS.ErrnoException) => void,
  ) {}

  write(data: Buffer): void {
    if (this.closed || data.length === 0) return;
    this.queue.push({ data, offset: 0 });
    if (this.queue.length === 1) this.flush();
  }

  /** Drops what is queued; the fd is about to be closed by its owner. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
  }

  private flush(): void {
    const task = this.queue[0];
    if (this.closed || !task) return;
    write(this.fd, task.data, task.offset, task.data.length - task.offset, null, (error, written) => {
      if (error) {
        if (error.code === "EAGAIN") {
          setImmediate(() => this.flush());
          return;
        }
        this.close();
        this.onError(error);
        return;
      }
      task.offset += written;
      if (task.offset >= task.data.length) this.queue.shift();
      this.flush();
    });
  }
}
