/**
 * The front's way to give a client to the process host that forked it: the
 * upgraded socket itself, over their IPC channel (child_process's handle
 * passing). From then on the host reads and writes the client's descriptor
 * directly, as an in-process daemon would, and this process holds nothing of
 * it. A TLS socket cannot move (its session state lives here): it is relayed
 * (front-relay.ts).
 */
import { Socket } from "node:net";
import { TLSSocket } from "node:tls";
import type { Duplex } from "node:stream";
import type { PeerDescription } from "../rpc/connection.js";
import type { HandedClient } from "./host-protocol.js";

/** True for a plain TCP socket, in a front with a channel to its host. */
export function canHandOver(socket: Duplex): socket is Socket {
  return socket instanceof Socket && !(socket instanceof TLSSocket) && typeof process.send === "function" && process.connected;
}

/**
 * Sends `socket` with what was read of it past the handshake, once the 101
 * has left (the descriptor's copy here is closed once the host has it,
 * which would cut a write still pending). From the moment it is sent
 * nothing more is read here: what the client sends meanwhile waits in the
 * kernel and moves with the descriptor. Rejects when the channel cannot
 * take it (the host is gone); the socket is closed then.
 */
export async function handOver(socket: Socket, head: Buffer, peer: PeerDescription, linkId: number): Promise<void> {
  if (socket.writableLength > 0) await new Promise((resolve) => socket.once("drain", resolve).once("close", resolve));
  if (socket.destroyed) throw new Error("the client left before it could be handed over");
  // What the stream holds comes out first: reading it may start the handle
  // reading again (Node stops it while its buffer is full). Then libuv
  // stops, below the stream, which is told it still reads, so that nothing
  // starts the handle again before child_process takes it (it waits for
  // the host to acknowledge the socket handed over before this one).
  const read: Buffer[] = [head];
  for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null; ) read.push(chunk);
  const handle = (socket as Socket & { _handle?: { readStop?(): void; reading?: boolean } })._handle;
  handle?.readStop?.();
  if (handle) handle.reading = true;
  const message: HandedClient = { kind: "client", peer, linkId, head: Buffer.concat(read).toString("base64") };
  return new Promise((resolve, reject) => {
    process.send!(message, socket, { keepOpen: false }, (error: Error | null) => {
      if (!error) return resolve();
      socket.destroy();
      reject(error);
    });
  });
}
