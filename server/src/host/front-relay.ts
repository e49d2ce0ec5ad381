/**
 * The front's half of one client: its WebSocket on one side, its link to the
 * process host on the other, messages passed through as they are. Each side
 * stops reading while the other cannot take more, so a client that does not
 * read is felt by the host's flow control as a socket that does not drain,
 * and a host that does not read stops the client's socket.
 */
import type { Socket } from "node:net";
import type { WebSocket } from "ws";
import { toBuffer } from "../transport/websocket-transport.js";
import { decodeClose, FrameKind, FramePieceReader, writeFrame } from "./link-frames.js";
import { HOST_FRAME_LIMIT_BYTES } from "./host-client.js";

/** How a client's message (or pong) goes to the host. */
type ToHost = (kind: FrameKind, message: Buffer) => void;
const NOTHING = Buffer.alloc(0);

/** Close code a client sees when the host's end of its link vanished (RFC 6455: try again later). */
const HOST_GONE_CLOSE = 1012;

/**
 * `highWaterBytes`: how much the front lets wait for the client before it
 * stops reading the host. The link is still connecting when the client may
 * already speak: the client's socket is paused, and what it had already
 * sent waits for the link.
 */
export function relayClient(socket: WebSocket, connecting: Promise<Socket>, highWaterBytes: number, onFailure: (error: Error) => void): void {
  const early: [FrameKind, Buffer][] = [];
  let toHost: ToHost = (kind, message) => void early.push([kind, message]);
  socket.pause();
  socket.on("message", (data, isBinary) => toHost(isBinary ? FrameKind.Binary : FrameKind.Text, toBuffer(data)));
  socket.on("pong", () => toHost(FrameKind.Pong, NOTHING));
  socket.on("error", () => undefined); // "close" follows
  connecting.then(
    (link) => {
      toHost = relayTo(socket, link, highWaterBytes);
      // What came before the link is small: the socket was paused as soon as it was upgraded.
      for (const [kind, message] of early.splice(0)) toHost(kind, message);
      // Unless those frames filled the link already (then its drain resumes the socket).
      if (!link.writableNeedDrain) socket.resume();
    },
    (error: Error) => onFailure(error),
  );
}

/** Wires a connected link both ways; returns how a frame goes to the host. */
function relayTo(socket: WebSocket, link: Socket, highWaterBytes: number): ToHost {
  if (socket.readyState !== socket.OPEN) link.end();
  let unsent = 0;
  let linkPaused = false;
  const sent = (bytes: number) => () => {
    unsent -= bytes;
    if (linkPaused && unsent <= highWaterBytes / 2) {
      linkPaused = false;
      link.resume();
    }
  };
  const toClient = (payload: Buffer, binary: boolean, fin: boolean) => {
    if (socket.readyState !== socket.OPEN) return;
    unsent += payload.length;
    socket.send(payload, { binary, fin }, sent(payload.length));
    if (!linkPaused && unsent > highWaterBytes) {
      linkPaused = true;
      link.pause();
    }
  };
  const reader = new FramePieceReader(HOST_FRAME_LIMIT_BYTES, (kind, payload, last) => {
    switch (kind) {
      case FrameKind.Text:
        return toClient(payload, false, last);
      case FrameKind.Binary:
        return toClient(payload, true, last);
      case FrameKind.Close: {
        const { code, reason } = decodeClose(payload);
        return socket.close(code, reason);
      }
      case FrameKind.Ping:
        return socket.readyState === socket.OPEN ? socket.ping() : undefined;
    }
  });
  link.on("data", (chunk: Buffer) => {
    try {
      reader.push(chunk);
    } catch {
      link.destroy();
    }
  });
  link.on("error", () => undefined); // "close" follows
  link.once("close", () => {
    if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(HOST_GONE_CLOSE, "the process host closed this connection");
  });

  let socketPaused = false;
  link.on("drain", () => {
    if (!socketPaused) return;
    socketPaused = false;
    socket.resume();
  });
  socket.once("close", () => link.end());
  return (kind, message) => {
    if (link.destroyed || !link.writable) return;
    if (!writeFrame(link, kind, message) && !socketPaused) {
      socketPaused = true;
      socket.pause();
    }
  };
}
