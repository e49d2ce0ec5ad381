/**
 * The host's side of one client's link: a MessageTransport (rpc/transport.ts)
 * over the unix socket the front relays that client's WebSocket through. The
 * Connection above it cannot tell it from a WebSocket: pings, closes and
 * terminates travel as frames and the front performs them on the real socket.
 */
import type { Socket } from "node:net";
import type { Liveness, MessageTransport } from "../rpc/transport.js";
import { encodeClose, encodeFrame, FrameKind, writeFrame } from "./link-frames.js";

export class LinkTransport implements MessageTransport {
  readonly carriesBinary = true;
  readonly liveness: Liveness;
  private readonly messageListeners: ((data: Buffer) => void)[] = [];
  private readonly lifeListeners: (() => void)[] = [];
  private closing = false;

  /** `terminateAside`: has the front drop the client at once, by a way that does not queue behind this link's data. */
  constructor(
    private readonly socket: Socket,
    terminateAside: () => void,
  ) {
    this.liveness = {
      ping: () => this.write(encodeFrame(FrameKind.Ping)),
      onSignOfLife: (listener) => this.lifeListeners.push(listener),
      terminate: () => {
        terminateAside();
        this.closing = true;
        this.socket.destroy();
      },
    };
  }

  /** A frame the front sent for this client (the link's reader hands each one here). */
  deliver(kind: FrameKind, payload: Buffer): void {
    if (kind === FrameKind.Text || kind === FrameKind.Binary) {
      for (const listener of this.lifeListeners) listener();
      for (const listener of this.messageListeners) listener(payload);
    } else if (kind === FrameKind.Pong) {
      for (const listener of this.lifeListeners) listener();
    }
  }

  get isOpen(): boolean {
    return !this.closing && !this.socket.destroyed && this.socket.writable;
  }

  /** What waits for the front (and, once the front stops reading, for the client). */
  get bufferedAmount(): number {
    return this.socket.writableLength;
  }

  send(message: string | Buffer, sent: (error?: Error) => void): void {
    if (!this.isOpen) return sent(new Error("the link is closed"));
    writeFrame(this.socket, typeof message === "string" ? FrameKind.Text : FrameKind.Binary, message, (error) => sent(error ?? undefined));
  }

  close(code: number, reason: string): void {
    if (!this.isOpen) return;
    this.write(encodeClose(code, reason));
    this.endLink();
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  onMessage(listener: (data: Buffer) => void): void {
    this.messageListeners.push(listener);
  }

  onTooLarge(): void {
    // The front's WebSocket enforces --max-message-bytes; the link's own bound only catches a broken front.
  }

  onInputEnd(): void {
    // A WebSocket cannot half-close, so neither can its link.
  }

  onClose(listener: () => void): void {
    this.socket.once("close", () => listener());
  }

  onError(listener: (error: Error) => void): void {
    this.socket.on("error", listener);
  }

  private write(frame: Buffer): void {
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(frame);
  }

  /** Sends what is queued, then ends the link; the front closes the WebSocket when it reads the close. */
  private endLink(): void {
    this.closing = true;
    this.socket.end();
  }
}
