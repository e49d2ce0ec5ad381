/**
 * The WebSocket transport: a thin wrapper over one `ws` socket. Text and
 * binary frames alike carry one message (upstream accepts both); a message
 * over `maxPayload` is refused by `ws` itself, which closes with 1009.
 */
import type { RawData, WebSocket } from "ws";
import { Utf8Text, type Liveness, type MessageTransport, type OutgoingMessage } from "../rpc/transport.js";

/** Buffer.from(buffer) would copy: a Buffer is passed on where it is. */
function toBuffer(data: RawData): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}

/** How a daemon that shuts down closes its clients' WebSockets (RFC 6455: going away). */
export const SHUTDOWN_CLOSE = { code: 1001, reason: "execmux is shutting down" } as const;

/**
 * An error on a client's WebSocket. A client's protocol error (a frame over
 * --max-message-bytes, bad framing): ws is already closing the socket with
 * the right code, which the client needs to see, so no terminate() and no
 * stack trace. Anything else ends the socket.
 */
export function onClientSocketError(error: Error, socket: WebSocket, log: { warn(fields: object, message: string): void; error(fields: object, message: string): void }): void {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && code.startsWith("WS_ERR_")) return log.warn({ code }, `closing the connection: ${error.message}`);
  log.error({ err: error }, "connection failed");
  socket.terminate();
}

export class WebSocketTransport implements MessageTransport {
  readonly carriesBinary = true;
  readonly liveness: Liveness;

  constructor(private readonly socket: WebSocket) {
    this.liveness = {
      ping: () => socket.ping(),
      onSignOfLife: (listener) => {
        socket.on("pong", () => listener());
        socket.on("message", () => listener());
      },
      terminate: () => socket.terminate(),
    };
  }

  get isOpen(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  send(message: OutgoingMessage, sent: (error?: Error) => void): void {
    if (message instanceof Utf8Text) this.socket.send(message.bytes, { binary: false }, sent);
    else this.socket.send(message, sent);
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  onMessage(listener: (data: Buffer) => void): void {
    this.socket.on("message", (data) => listener(toBuffer(data)));
  }

  onTooLarge(): void {
    // ws closes the socket with 1009 itself; nothing reaches the connection.
  }

  onInputEnd(): void {
    // A WebSocket cannot half-close: its end is `onClose`.
  }

  onClose(listener: () => void): void {
    this.socket.on("close", () => listener());
  }

  onError(listener: (error: Error) => void): void {
    this.socket.on("error", listener);
  }
}
