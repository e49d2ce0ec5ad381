/**
 * The WebSocket transport: a thin wrapper over one `ws` socket. Text and
 * binary frames alike carry one message (upstream accepts both); a message
 * over `maxPayload` is refused by `ws` itself, which closes with 1009.
 */
import type { RawData, WebSocket } from "ws";
import type { Liveness, MessageTransport } from "../rpc/transport.js";

/** Buffer.from(buffer) would copy: a Buffer is passed on where it is. */
export function toBuffer(data: RawData): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
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

  send(message: string | Buffer, sent: (error?: Error) => void): void {
    this.socket.send(message, sent);
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
