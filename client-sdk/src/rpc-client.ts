/**
 * JSON-RPC over one open socket: numbered requests with timeouts, replies
 * matched by id, notifications handed to one listener. Requests still
 * pending when the socket closes fail with DisconnectedError, except the one
 * the daemon closed it for as too large (1009), which fails with
 * MessageTooLargeError.
 */
import {
  decodeBinaryOutputFrame,
  type BinaryOutputFrame,
  type ParamsOf,
  type RequestMethod,
  type ResultOf,
  type RpcErrorBody,
} from "@execmux/shared";
import { DisconnectedError, MessageTooLargeError, RequestTimeoutError, RpcRequestError } from "./errors.js";
import { OPEN, type WebSocketLike } from "./socket.js";

interface Pending {
  method: string;
  /** Length of the request's frame (process/write frames are ASCII, so bytes). */
  size: number;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: unknown;
}

export type NotificationListener = (method: string, params: unknown) => void;

/** WebSocket close code for a message larger than the peer accepts. */
const MESSAGE_TOO_BIG = 1009;

/**
 * What the client learnt about the daemon's message size limit; shared by
 * every connection of one client, so a reconnect does not forget it.
 */
export interface FrameLimit {
  /** A frame this long (or longer) was refused. */
  refusedBytes: number;
}

export class RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closeReason: string | undefined;

  constructor(
    private readonly socket: WebSocketLike,
    private readonly onNotification: NotificationListener,
    private readonly onBinaryOutput: (frame: BinaryOutputFrame) => void,
    private readonly onClose: (reason: string, code: number | undefined) => void,
    private readonly limit: FrameLimit = { refusedBytes: Infinity },
  ) {
    socket.addEventListener("message", (event) => this.onMessage(event.data));
    socket.addEventListener("close", (event) =>
      this.closed(`socket closed (${event.code}${event.reason ? `: ${event.reason}` : ""})`, event.code),
    );
  }

  get isOpen(): boolean {
    return this.closeReason === undefined && this.socket.readyState === OPEN;
  }

  request<M extends RequestMethod>(method: M, params: ParamsOf<M>, timeoutMs: number): Promise<ResultOf<M>> {
    if (!this.isOpen) return Promise.reject(new DisconnectedError(`${method}: ${this.closeReason ?? "not connected"}`));
    const id = this.nextId++;
    const frame = JSON.stringify({ id, method, params });
    // Sending it would only make the daemon close the socket again.
    if (frame.length >= this.limit.refusedBytes) return Promise.reject(new MessageTooLargeError(method, frame.length));
    return new Promise<ResultOf<M>>((resolve, reject) => {
      const timer =
        timeoutMs > 0 && Number.isFinite(timeoutMs)
          ? setTimeout(() => {
              this.pending.delete(id);
              reject(new RequestTimeoutError(`${method}: no reply within ${timeoutMs} ms`));
            }, timeoutMs)
          : undefined;
      this.pending.set(id, { method, size: frame.length, resolve: resolve as (result: unknown) => void, reject, timer });
      this.socket.send(frame);
    });
  }

  notify(method: string, params: unknown): void {
    if (this.isOpen) this.socket.send(JSON.stringify({ method, params }));
  }

  close(): void {
    this.socket.close(1000, "client closed");
    this.closed("closed by the client");
  }

  private onMessage(data: unknown): void {
    if (typeof data !== "string") {
      // Binary frames carry process output (the binaryOutput extension).
      const bytes = data instanceof Uint8Array ? data : new Uint8Array(data as ArrayBuffer);
      const frame = decodeBinaryOutputFrame(bytes);
      if (frame) this.onBinaryOutput(frame);
      return;
    }
    const text = data;
    let message: { id?: number; method?: string; params?: unknown; result?: unknown; error?: RpcErrorBody };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return; // the daemon only sends JSON; ignore anything else
    }
    if (typeof message.method === "string" && message.id === undefined) {
      this.onNotification(message.method, message.params);
      return;
    }
    const pending = message.id === undefined ? undefined : this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id!);
    if (pending.timer) clearTimeout(pending.timer);
    if (message.error) pending.reject(new RpcRequestError(pending.method, message.error));
    else pending.resolve(message.result);
  }

  private closed(reason: string, code?: number): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    const tooLarge = code === MESSAGE_TOO_BIG ? this.largestPending() : undefined;
    if (tooLarge) this.limit.refusedBytes = Math.min(this.limit.refusedBytes, tooLarge.size);
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      if (pending.timer) clearTimeout(pending.timer);
      pending.reject(pending === tooLarge ? new MessageTooLargeError(pending.method, pending.size) : new DisconnectedError(`${pending.method}: ${reason}`));
    }
    this.onClose(reason, code);
  }

  /**
   * The request the daemon refused: whichever frame it was, the largest one
   * in flight is at least as large, so it would be refused too.
   */
  private largestPending(): Pending | undefined {
    let largest: Pending | undefined;
    for (const pending of this.pending.values()) if (!largest || pending.size > largest.size) largest = pending;
    return largest;
  }
}

