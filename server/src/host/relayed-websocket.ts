/**
 * The front's WebSocket class (ws's `WebSocket` option): the handshake is
 * ws's own (the 101, the subprotocol), but the socket it upgraded is not
 * parsed here. It is kept as it is, for front-relay.ts to pass to the
 * process host byte for byte, where the frames are parsed once.
 */
import type { Duplex } from "node:stream";
import { WebSocket } from "ws";

export class RelayedWebSocket extends WebSocket {
  private upgraded?: { socket: Duplex; head: Buffer };

  /** Called by ws's server right after it answered the handshake, in place of attaching its parser. */
  setSocket(socket: Duplex, head: Buffer): void {
    this.upgraded = { socket, head };
    // As ws does: no idle timeout from the HTTP server, and no Nagle delay on small frames.
    (socket as Duplex & { setTimeout?(ms: number): void }).setTimeout?.(0);
    (socket as Duplex & { setNoDelay?(): void }).setNoDelay?.();
    socket.once("close", () => this.emit("close", 1006, Buffer.alloc(0)));
  }

  /** The upgraded socket and the bytes the client sent along with its handshake. */
  take(): { socket: Duplex; head: Buffer } {
    if (!this.upgraded) throw new Error("the WebSocket was not upgraded");
    return this.upgraded;
  }

  /** The process host closes its clients' WebSockets (with a code) when it shuts down; the front has no say in their frames. */
  override close(): void {}

  override terminate(): void {
    this.upgraded?.socket.destroy();
  }
}
