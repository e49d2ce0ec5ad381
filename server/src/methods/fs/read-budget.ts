/**
 * A daemon-wide allowance of bytes for work that holds whole files in
 * memory. Reservations are granted in arrival order, so a large read is not
 * starved by a stream of small ones; a waiter whose connection closes leaves
 * the queue.
 */
import { connectionClosed } from "../../errors/rpc-error.js";
import { WHOLE_FILE_READ_BUDGET_BYTES } from "./limits.js";

interface Waiter {
  readonly bytes: number;
  readonly grant: () => void;
}

export class ByteBudget {
  private available: number;
  private readonly waiters: Waiter[] = [];

  constructor(readonly total: number) {
    this.available = total;
  }

  /** Resolves with a release function once `bytes` (at most `total`) are free. */
  async reserve(bytes: number, signal: AbortSignal): Promise<() => void> {
    const wanted = Math.min(bytes, this.total);
    if (this.waiters.length === 0 && this.available >= wanted) {
      this.available -= wanted;
      return this.releaser(wanted);
    }
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        bytes: wanted,
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        // The first waiter leaving can unblock smaller ones behind it.
        this.grantWaiting();
        reject(connectionClosed());
      };
      this.waiters.push(waiter);
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    return this.releaser(wanted);
  }

  private releaser(bytes: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.available += bytes;
      this.grantWaiting();
    };
  }

  private grantWaiting(): void {
    for (let first = this.waiters[0]; first && this.available >= first.bytes; first = this.waiters[0]) {
      this.waiters.shift();
      this.available -= first.bytes;
      first.grant();
    }
  }
}

/** Whole-file reads (fs/readFile) across every connection of this daemon. */
export const wholeFileReads = new ByteBudget(WHOLE_FILE_READ_BUDGET_BYTES);
