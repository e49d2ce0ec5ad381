/**
 * The front's WebSocket class (ws's `WebSocket` option): the handshake is
 * ws's own (the 101, the subprotocol), but the socket it upgraded is not
 * parsed here. It is kept as it is, for front-relay.ts to pass to the
 * process host byte for byte, where the frames are parsed once.
 */
import type { Duplex } from "node:stream";
import { WebSocket } from "ws";

export class RelayedWebSocket extends WebSocket {
  private upgraded: { socket: Duplex; head: Buffer } | undefined;

  /** Called by ws's server right after it answered the handshake, in place of attaching its parser. */
  setSocket(socket: Duplex, head: Buffer): void {
    this.upgraded = { socket, head };
    // As ws does: no idle timeout from the HTTP server, and no Nagle delay on small frames.
    (socket as Duplex & { setTimeout?(ms: number): void }).setTimeout?.(0);
    (socket as Duplex & { setNoDelay?(): void }).setNoDelay?.();
    // The close code is the host's to know; here the socket is simply gone.
    socket.once("close", () => this.emit("close"));
  }

  /** The upgraded socket and the bytes the client sent along with its handshake. */
  take(): { socket: Duplex; head: Buffer } {
    const { upgraded } = this;
    if (!upgraded) throw new Error("the WebSocket was not upgraded, or was taken already");
    this.upgraded = undefined;
    return upgraded;
  }

  /** The process host closes its clients' WebSockets (with a code) when it shuts down; the front has no say in their frames. */
  override close(): void {}

  /** ws's server never terminates a client it tracks; the relay (front-relay.ts) owns the socket once taken. */
  override terminate(): void {}
}
