/**
 * The front's half of one client: the client's upgraded socket on one side,
 * its link to the process host on the other, bytes passed through as they
 * are (the host parses the WebSocket frames). Each side stops reading while
 * the other cannot take more, so a client that does not read is felt by the
 * host's flow control as a socket that does not drain, and a host that does
 * not read stops the client's socket.
 */
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

/**
 * How long a client's socket may take to flush once the host has ended its
 * link (a close frame, the last output): one that does not read is dropped.
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

/**
 * `head`: what the client sent along with its handshake; it goes first. The
 * link is still connecting when the client may already speak: its socket is
 * not read until the link is there. Returns how to drop the client at once.
 */
export function relayClient(client: Duplex, head: Buffer, connecting: Promise<Socket>, onFailure: (error: Error) => void): () => void {
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
      // The client gone: the host sees its link end once what the client sent is through.
      client.once("close", () => link!.end());
      link.once("close", () => {
        if (client.destroyed) return;
        client.end(); // after the close frame the host sent, if any
        setTimeout(() => client.destroy(), FLUSH_ON_END_MS).unref();
      });
    },
    (error: Error) => {
      onFailure(error);
      // Nothing from the host reached the client yet, so a close frame of the front's own can.
      client.end(closeFrame(HOST_UNREACHABLE_CLOSE, "the process host is unreachable"));
      setTimeout(() => client.destroy(), FLUSH_ON_END_MS).unref();
    },
  );
  return () => {
    client.destroy();
    link?.destroy();
  };
}
