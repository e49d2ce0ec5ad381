/**
 * At most HELPER_SLOTS confined helpers run at once, daemon-wide: each is a
 * bwrap and a Node process (tens of MB, ~100 ms of CPU), and a client that
 * fires a thousand sandboxed fs/writeFile calls at once must not start a
 * thousand processes. Later calls wait their turn, in order; a call whose
 * connection closes while it waits leaves the queue.
 */
import { connectionClosed } from "../errors/rpc-error.js";

/** Enough to keep both cores of a small host busy while one helper waits on the disk. */
export const HELPER_SLOTS = 4;

let running = 0;
const waiting: (() => void)[] = [];

const closed = () => connectionClosed();

/** Resolves with a release function once a slot is free; rejects if `signal` aborts first. */
export function acquireHelperSlot(signal?: AbortSignal): Promise<() => void> {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    running--;
    waiting.shift()?.();
  };
  if (signal?.aborted) return Promise.reject(closed());
  if (running < HELPER_SLOTS) {
    running++;
    return Promise.resolve(release);
  }
  return new Promise((resolve, reject) => {
    const start = () => {
      signal?.removeEventListener("abort", leave);
      running++;
      resolve(release);
    };
    const leave = () => {
      const index = waiting.indexOf(start);
      if (index >= 0) waiting.splice(index, 1);
      reject(closed());
    };
    waiting.push(start);
    signal?.addEventListener("abort", leave, { once: true });
  });
}
