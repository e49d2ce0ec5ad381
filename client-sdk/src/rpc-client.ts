/**
 * JSON-RPC over one open socket: numbered requests with timeouts, replies
 * matched by id, notifications handed to one listener. Requests still
 * pending when the socket closes fail with DisconnectedError.
 */
import {
  decodeBinaryOutputFrame,
  type BinaryOutputFrame,
  type ParamsOf,
  type RequestMethod,
  type ResultOf,
  type RpcErrorBody,
} from "@execmux/shared";
import { DisconnectedError, RequestTimeoutError, RpcRequestError } from "./errors.js";
import { OPEN, type WebSocketLike } from "./socket.js";

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: unknown;
}

export type NotificationListener = (method: string, params: unknown) => void;

export class RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closeReason: string | undefined;

  constructor(
    private readonly socket: WebSocketLike,
    private readonly onNotification: NotificationListener,
    private readonly onBinaryOutput: (frame: BinaryOutputFrame) => void,
    private readonly onClose: (reason: string) => void,
  ) {
    socket.addEventListener("message", (event) => this.onMessage(event.data));
    socket.addEventListener("close", (event) => this.closed(`socket closed (${event.code}${event.reason ? `: ${event.reason}` : ""})`));
  }

  get isOpen(): boolean {
    return this.closeReason === undefined && this.socket.readyState === OPEN;
  }

  request<M extends RequestMethod>(method: M, params: ParamsOf<M>, timeoutMs: number): Promise<ResultOf<M>> {
    if (!this.isOpen) return Promise.reject(new DisconnectedError(`${method}: ${this.closeReason ?? "not connected"}`));
    const id = this.nextId++;
    return new Promise<ResultOf<M>>((resolve, reject) => {
      const timer =
        timeoutMs > 0 && Number.isFinite(timeoutMs)
          ? setTimeout(() => {
              this.pending.delete(id);
              reject(new RequestTimeoutError(`${method}: no reply within ${timeoutMs} ms`));
            }, timeoutMs)
          : undefined;
      this.pending.set(id, { method, resolve: resolve as (result: unknown) => void, reject, timer });
      this.socket.send(JSON.stringify({ id, method, params }));
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

  private closed(reason: string): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      if (pending.timer) clearTimeout(pending.timer);
      pending.reject(new DisconnectedError(`${pending.method}: ${reason}`));
    }
    this.onClose(reason);
  }
}

