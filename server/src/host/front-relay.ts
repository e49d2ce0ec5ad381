/**
 * The front's half of one client: the client's upgraded socket on one side,
 * its link to the process host on the other, bytes passed through as they
 * are (the host parses the WebSocket frames). Each side stops reading while
 * the other cannot take more, so a client that does not read is felt by the
 * host's flow control as a socket that does not drain, and a host that does
 * not read stops the client's socket.
 *
 * A paused socket does not see its peer leave, so the end of either side is
 * not left to the other's EOF alone: a client gone lets its link drain and
 * go, and the host says over its control link when it is done with a client
 * (host-client.ts), which then has a while to take what is queued for it.
 */
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

/**
 * How long a side may take to flush once the other is done (the host's close
 * frame and last output to the client, the client's last messages to the
 * host): one that does not read is dropped after this.
 */
const FLUSH_ON_END_MS = 10_000;

/** Close code a client sees when its link to the host cannot be opened (RFC 6455: internal error). */
const HOST_UNREACHABLE_CLOSE = 1011;

/** A server's close frame (unmasked, short reason) as RFC 6455 lays it out. */
function closeFrame(code: number, reason: string): Buffer {
  const reasonBytes = Buffer.from(reason).subarray(0, 123);
  const frame = Buffer.alloc(4 + reasonBytes.length);
  frame[0] = 0x88; // FIN, opcode 8 (close)
  frame[1] = 2 + reasonBytes.length;
  frame.writeUInt16BE(code, 2);
  reasonBytes.copy(frame, 4);
  return frame;
}

/** Ends a socket, and destroys it if it has not closed FLUSH_ON_END_MS later. */
function endWithin(socket: Duplex, last?: Buffer): void {
  if (socket.destroyed) return;
  socket.end(last);
  const timer = setTimeout(() => socket.destroy(), FLUSH_ON_END_MS);
  socket.once("close", () => clearTimeout(timer));
}

export interface RelayedClient {
  /** The host is done with this client (its WebSocket closed there): what is queued may still flush, for a while. */
  finished(): void;
  /** Drops the client at once (the host gave up on it). */
  terminate(): void;
}

/**
 * `head`: what the client sent along with its handshake; it goes first. The
 * link is still connecting when the client may already speak: its socket is
 * not read until the link is there.
 */
export function relayClient(client: Duplex, head: Buffer, connecting: Promise<Socket>, onFailure: (error: Error) => void): RelayedClient {
  client.pause();
  client.on("error", () => undefined); // "close" follows
  let link: Socket | undefined;
  connecting.then(
    (connected) => {
      link = connected;
      link.on("error", () => undefined); // "close" follows
      if (client.destroyed) return void link.destroy();
      if (head.length > 0) link.write(head);
      client.pipe(link);
      link.pipe(client);
      client.once("close", () => {
        // What the client sent still reaches the host; what the host still sends goes nowhere.
        link!.unpipe(client);
        link!.resume();
        endWithin(link!);
      });
      link.once("close", () => endWithin(client)); // after the close frame the host sent, if any
    },
    (error: Error) => {
      onFailure(error);
      // Nothing from the host reached the client yet, so a close frame of the front's own can.
      endWithin(client, closeFrame(HOST_UNREACHABLE_CLOSE, "the process host is unreachable"));
    },
  );
  const terminate = () => {
    client.destroy();
    link?.destroy();
  };
  return {
    // The link's end may wait unread behind output the client does not take: a deadline, not an end.
    finished: () => {
      if (client.destroyed) return;
      const timer = setTimeout(terminate, FLUSH_ON_END_MS);
      client.once("close", () => clearTimeout(timer));
    },
    terminate,
  };
}
