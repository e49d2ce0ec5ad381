/**
 * The front's WebSocket class (ws's `WebSocket` option): the handshake is
 * ws's own (the 101, the subprotocol), but the socket it upgraded is not
 * parsed here. It is kept as it is, for the process host to take over
 * (front-handoff.ts) or for front-relay.ts to pass to it byte for byte;
 * the frames are parsed there, once. Whoever takes the socket says when
 * the client is gone (`ended`), which frees its place in the quotas.
 */
import type { Duplex } from "node:stream";
import { WebSocket } from "ws";

export class RelayedWebSocket extends WebSocket {
  private upgraded: { socket: Duplex; head: Buffer } | undefined;
  private closed = false;

  /** Called by ws's server right after it answered the handshake, in place of attaching its parser. */
  setSocket(socket: Duplex, head: Buffer): void {
    this.upgraded = { socket, head };
    // As ws does: no idle timeout from the HTTP server, and no Nagle delay on small frames.
    (socket as Duplex & { setTimeout?(ms: number): void }).setTimeout?.(0);
    (socket as Duplex & { setNoDelay?(): void }).setNoDelay?.();
  }

  /** The client is gone (the close code is the host's to know). */
  ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit("close");
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

  /** ws's server never terminates a client it tracks; the host (or the relay, front-relay.ts) owns the socket once taken. */
  override terminate(): void {}
}
