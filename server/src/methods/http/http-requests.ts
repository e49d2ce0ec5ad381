/**
 * A connection's http/request calls in flight: the cap on how many, the
 * streamed requestIds (reserved until their terminal frame, as upstream),
 * each call's abort signal (timeout, or the connection closing), and the
 * turn-taking that paces every stream's notifications on the socket. Each
 * call in flight holds a socket to the server: a descriptor charged to the
 * connection's client (budgets/descriptor-budget.ts) until the call ends.
 */
import type { Disposable } from "../../rpc/connection-resources.js";
import { limitExceeded } from "../../errors/rpc-error.js";
import { streamIdActive } from "./errors.js";

export const HTTP_REQUESTS = Symbol("http/request calls in flight");

/**
 * setTimeout's largest delay (about 24.8 days); Node fires a longer one at
 * once, so a longer timeoutMs means no timer at all, as good as unbounded.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Why a call's signal aborted. */
export type AbortCause = "timeout" | "closed";

export class HttpCall {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    readonly requestId: string,
    readonly streamed: boolean,
    timeoutMs: number | undefined,
    private readonly onEnd: (call: HttpCall) => void,
  ) {
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
      this.timer = setTimeout(() => this.abort("timeout"), timeoutMs);
    }
  }

  /** Aborted at the timeout, or when the connection closes: the exchange is torn down at once. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get abortCause(): AbortCause | undefined {
    return this.controller.signal.aborted ? (this.controller.signal.reason as AbortCause) : undefined;
  }

  abort(cause: AbortCause): void {
    if (!this.controller.signal.aborted) this.controller.abort(cause);
  }

  /** The call is over (reply sent, or terminal frame queued): its slot and requestId are free again. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.onEnd(this);
  }
}

export class HttpRequests implements Disposable {
  private readonly calls = new Set<HttpCall>();
  private readonly streamIds = new Set<string>();
  /** The end of the line of streams waiting for their turn to send a notification. */
  private lastTurn: Promise<void> = Promise.resolve();
  private disposed = false;

  /** `charge` takes one descriptor from the client's budget (throws -32011 past it) and returns its release. */
  constructor(
    private readonly maxCalls: number,
    private readonly charge: () => () => void = () => () => undefined,
  ) {}

  /** Starts a call: upstream's duplicate check first (a streamed id in use), then the connection's cap. */
  begin(requestId: string, streamed: boolean, timeoutMs: number | undefined): HttpCall {
    if (streamed && this.streamIds.has(requestId)) throw streamIdActive(requestId);
    if (this.calls.size >= this.maxCalls) {
      throw limitExceeded("maxHttpRequests", `this connection already has ${this.calls.size} http/request calls in flight`);
    }
    const release = this.charge();
    const call = new HttpCall(requestId, streamed, timeoutMs, (ended) => {
      this.calls.delete(ended);
      if (ended.streamed) this.streamIds.delete(ended.requestId);
      release();
    });
    this.calls.add(call);
    if (streamed) this.streamIds.add(requestId);
    if (this.disposed) call.abort("closed");
    return call;
  }

  /**
   * Runs `send` once every earlier stream's send has run and `whenWritable`
   * has resolved. Taking turns matters: all waiters wake together when the
   * socket drains, and without turns each of N streams would queue a 1 MiB
   * delta at once; with them, one at a time sees the socket below its mark.
   */
  takeTurn(whenWritable: () => Promise<void>, send: () => void): Promise<void> {
    const turn = this.lastTurn.then(whenWritable).then(send);
    this.lastTurn = turn.catch(() => undefined);
    return turn;
  }

  dispose(): void {
    this.disposed = true;
    for (const call of this.calls) call.abort("closed");
  }
}
