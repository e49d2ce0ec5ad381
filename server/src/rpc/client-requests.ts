/**
 * Requests the daemon sends its client (upstream has one: network/policyRequest,
 * the domain review of an executor-local proxy). Ids are integers from 1,
 * never reused while one is in flight, as upstream's client requires. Each
 * waits at most its own timeout; all fail at once when the connection
 * closes. A reply with an id nothing waits for is the caller's to judge
 * (the connection closes on it, as before).
 */

export class ClientRequestError extends Error {}

interface Pending {
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** More than any client has open at once (one per proxied connection waiting for a verdict); past it, a request fails at once. */
export const MAX_PENDING_CLIENT_REQUESTS = 1024;

export class ClientRequests {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;

  constructor(private readonly send: (id: number, method: string, params: unknown) => void) {}

  request(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    if (this.closed) return Promise.reject(new ClientRequestError("the connection closed"));
    if (this.pending.size >= MAX_PENDING_CLIENT_REQUESTS) return Promise.reject(new ClientRequestError("too many requests to the client at once"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ClientRequestError(`no answer to ${method} in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.send(id, method, params);
    });
  }

  /** Settles the request a reply answers; false when no request has that id. */
  settle(id: unknown, result: unknown, error: unknown): boolean {
    const pending = typeof id === "number" ? this.pending.get(id) : undefined;
    if (!pending) return false;
    this.pending.delete(id as number);
    clearTimeout(pending.timer);
    if (error !== undefined) pending.reject(new ClientRequestError(JSON.stringify(error)));
    else pending.resolve(result);
    return true;
  }

  close(): void {
    this.closed = true;
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(new ClientRequestError("the connection closed"));
    }
    this.pending.clear();
  }
}
