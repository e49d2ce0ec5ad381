/**
 * Frames on a link between the process host and the daemon that faces the
 * network (the front) or the `execmux serve` that asked for it (the
 * launcher): a 4-byte big-endian length, a kind byte, then the payload.
 * The control and launcher links speak only frames. A (TLS) client's link
 * opens with one Hello frame; after it come the client's WebSocket bytes as
 * they are, both ways: the front relays them, the host parses them.
 */
import type { Socket } from "node:net";

export const enum FrameKind {
  /** First frame of every link, JSON: who is speaking and which link versions it understands. */
  Hello = 1,
  // 2-6 carried a client's messages one by one in link version 1.
  /**
   * Control link, host to front: drop this client (its link number) at once.
   * Not on the client's own link, where the front would not read it while
   * the client does not read what is queued for it.
   */
  Terminate = 7,
  /** Control link, JSON requests and replies. */
  Request = 8,
  Reply = 9,
  /** Launcher link, host to launcher: a line for its stderr (the host's and the front's logs, each line whole). */
  Log = 10,
  /**
   * Control link, host to front: this client's WebSocket closed on the host
   * (its link number). The front gives what is still queued for the client a
   * while, then drops it: it may not read the link's end behind that.
   */
  Closed = 11,
  /** Launcher link, host to launcher: bytes the front wrote on its stdout (the URL line). */
  Stdout = 12,
  /** Launcher link, launcher to host: a signal's name, for the front (the launcher's own signals, passed on). */
  Signal = 13,
  /** Launcher link, host to launcher, last: how the front ended, JSON `{ code, signal }`. */
  Exit = 14,
  /**
   * Launcher link, launcher to host, once the hellos agreed: the front to
   * start (JSON, a FrontCommand). Not in the hello: a host that refuses a
   * hello logs it, and this carries the launcher's environment (its token).
   */
  Start = 15,
}

const HEADER_BYTES = 5;

export function encodeFrame(kind: FrameKind, payload: Buffer | string): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length + 1, 0);
  frame.writeUInt8(kind, 4);
  body.copy(frame, HEADER_BYTES);
  return frame;
}

/** Raised when the other side sends a frame past the bound: a broken peer, the link is closed. */
class FrameTooLarge extends Error {
  constructor(readonly bytes: number, readonly limit: number) {
    super(`a link frame of ${bytes} bytes exceeds the link's bound of ${limit}`);
  }
}

/**
 * Cuts a byte stream into frames. Holds at most one frame in progress, and
 * refuses one longer than `maxFrameBytes` before buffering it.
 */
export class FrameReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes the frame in progress needs in all (header included), once its header is in. */
  private needed = HEADER_BYTES;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly onFrame: (kind: FrameKind, payload: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    let data = chunk;
    if (this.pendingBytes > 0) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      // A long frame arrives in many reads: joined once it is whole, not at every read.
      if (this.pendingBytes < this.needed) return;
      data = Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
    }
    let offset = 0;
    this.needed = HEADER_BYTES;
    while (data.length - offset >= HEADER_BYTES) {
      const length = data.readUInt32BE(offset);
      if (length === 0 || length - 1 > this.maxFrameBytes) throw new FrameTooLarge(length - 1, this.maxFrameBytes);
      const end = offset + 4 + length;
      if (end > data.length) {
        this.needed = 4 + length;
        break;
      }
      this.onFrame(data.readUInt8(offset + 4) as FrameKind, data.subarray(offset + HEADER_BYTES, end));
      offset = end;
    }
    if (offset < data.length) {
      const rest = data.subarray(offset);
      this.pending.push(rest);
      this.pendingBytes = rest.length;
    }
  }
}

/**
 * Reads a link's frames from `first` (what came after its hello) on, as
 * they arrive. A malformed frame, or a handler that throws on one, closes
 * the link (and nothing else), after `onMalformed` heard why.
 */
export function readFrames(
  socket: Socket,
  first: Buffer,
  maxFrameBytes: number,
  onFrame: (kind: FrameKind, payload: Buffer) => void,
  onMalformed: (error: unknown) => void = () => undefined,
): void {
  const reader = new FrameReader(maxFrameBytes, onFrame);
  const read = (chunk: Buffer) => {
    try {
      reader.push(chunk);
    } catch (error) {
      onMalformed(error);
      socket.destroy();
    }
  };
  read(first);
  socket.on("data", read);
  socket.resume();
}

/**
 * Reads the first frame of a link and stops: resolves with it and the bytes
 * that came after it (a client's WebSocket stream, or the next frames),
 * leaving the socket paused with no reader, for whoever takes it next.
 */
export function readFirstFrame(socket: { on(event: "data", listener: (chunk: Buffer) => void): unknown; off(event: "data", listener: (chunk: Buffer) => void): unknown; pause(): unknown }, maxFrameBytes: number): Promise<{ kind: FrameKind; payload: Buffer; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    let received: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      if (received.length < HEADER_BYTES) return;
      const length = received.readUInt32BE(0);
      if (length === 0 || length - 1 > maxFrameBytes) {
        socket.off("data", onData);
        return reject(new FrameTooLarge(length - 1, maxFrameBytes));
      }
      if (received.length < 4 + length) return;
      socket.off("data", onData);
      socket.pause();
      resolve({ kind: received.readUInt8(4) as FrameKind, payload: received.subarray(HEADER_BYTES, 4 + length), rest: received.subarray(4 + length) });
    };
    socket.on("data", onData);
  });
}
