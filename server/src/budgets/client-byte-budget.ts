/**
 * Bytes the daemon holds in memory on clients' behalf, capped per client
 * and for the whole daemon. A reservation waits until it fits under both:
 * waiters queue per client, and room that frees up goes to the clients in
 * turn (round-robin), so one client's pile of waiting requests never stands
 * between another client and its first. A reservation larger than a cap is
 * cut to the cap, so it waits for room but never forever. A waiter whose
 * request is abandoned (its connection closed) leaves the queue.
 */
import { connectionClosed } from "../errors/rpc-error.js";

interface Waiter {
  readonly client: string;
  readonly bytes: number;
  readonly grant: () => void;
}

export interface ByteCaps {
  readonly total: number;
  readonly perClient: number;
}

export class ClientByteBudget {
  private capsFound: ByteCaps | undefined;
  private used = 0;
  private readonly usedBy = new Map<string, number>();
  /** Waiters by client, each in arrival order; the map's order is the round-robin's. */
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(private readonly findCaps: () => ByteCaps) {}

  get caps(): ByteCaps {
    return (this.capsFound ??= this.findCaps());
  }

  /** Bytes reserved now, all clients together. */
  get reserved(): number {
    return this.used;
  }

  /** Resolves with the release once `bytes` (cut to the caps) fit; rejects with -32012 when `signal` aborts first. */
  async reserve(client: string, bytes: number, signal: AbortSignal): Promise<() => void> {
    const wanted = Math.min(bytes, this.caps.perClient, this.caps.total);
    if (signal.aborted) throw connectionClosed();
    if (!this.waiting.has(client) && this.fits(client, wanted)) return this.charge(client, wanted);
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        client,
        bytes: wanted,
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.leave(waiter);
        reject(connectionClosed());
      };
      signal.addEventListener("abort", onAbort, { once: true });
      const queue = this.waiting.get(client);
      if (queue) queue.push(waiter);
      else this.waiting.set(client, [waiter]);
    });
    return this.releaser(client, wanted);
  }

  private fits(client: string, bytes: number): boolean {
    return this.used + bytes <= this.caps.total && (this.usedBy.get(client) ?? 0) + bytes <= this.caps.perClient;
  }

  private charge(client: string, bytes: number): () => void {
    this.used += bytes;
    this.usedBy.set(client, (this.usedBy.get(client) ?? 0) + bytes);
    return this.releaser(client, bytes);
  }

  private releaser(client: string, bytes: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
      const left = (this.usedBy.get(client) ?? bytes) - bytes;
      if (left <= 0) this.usedBy.delete(client);
      else this.usedBy.set(client, left);
      this.grantWaiting();
    };
  }

  private leave(waiter: Waiter): void {
    const queue = this.waiting.get(waiter.client);
    const index = queue?.indexOf(waiter) ?? -1;
    if (index < 0) return;
    queue!.splice(index, 1);
    if (queue!.length === 0) this.waiting.delete(waiter.client);
    // The head of a queue leaving can let others through.
    this.grantWaiting();
  }

  /** Each client in turn gets its first waiter through if it fits; a client served goes to the back of the turn. */
  private grantWaiting(): void {
    for (let granted = true; granted; ) {
      granted = false;
      for (const [client, queue] of this.waiting) {
        const first = queue[0]!;
        if (!this.fits(client, first.bytes)) continue;
        queue.shift();
        this.waiting.delete(client);
        if (queue.length > 0) this.waiting.set(client, queue);
        this.used += first.bytes;
        this.usedBy.set(client, (this.usedBy.get(client) ?? 0) + first.bytes);
        first.grant();
        granted = true;
        break;
      }
    }
  }
}
