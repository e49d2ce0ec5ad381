/**
 * Frames on a link between the daemon that faces the network (the front)
 * and the process host: a 4-byte big-endian length, a kind byte, then the
 * payload. One unix-socket connection carries one client's messages (or,
 * for the control link, the front's requests), so a frame needs no channel
 * number and each client's backpressure is its own socket's.
 */

export const enum FrameKind {
  /** First frame of every link, JSON: who is speaking and which link versions it understands. */
  Hello = 1,
  /** A client's text message (JSON-RPC), either way. */
  Text = 2,
  /** A client's binary message (the binaryOutput extension), either way. */
  Binary = 3,
  /** Host to front: close the WebSocket with this code (2 bytes) and reason (the rest). */
  Close = 4,
  /** Host to front: ping the client. Front to host: the client answered (or spoke). */
  Ping = 5,
  Pong = 6,
  /** Host to front: drop the client at once, without a closing handshake. */
  Terminate = 7,
  /** Control link, JSON requests and replies. */
  Request = 8,
  Reply = 9,
  /** Control link, host to front: a log line to write (already JSON, ends in a newline). */
  Log = 10,
}

const HEADER_BYTES = 5;

export function encodeFrame(kind: FrameKind, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length + 1, 0);
  frame.writeUInt8(kind, 4);
  body.copy(frame, HEADER_BYTES);
  return frame;
}

export function encodeClose(code: number, reason: string): Buffer {
  const reasonBytes = Buffer.from(reason);
  const payload = Buffer.allocUnsafe(2 + reasonBytes.length);
  payload.writeUInt16BE(code, 0);
  reasonBytes.copy(payload, 2);
  return encodeFrame(FrameKind.Close, payload);
}

export function decodeClose(payload: Buffer): { code: number; reason: string } {
  return { code: payload.length >= 2 ? payload.readUInt16BE(0) : 1011, reason: payload.subarray(2).toString() };
}

/** Raised when the other side sends a frame past the bound: a broken peer, the link is closed. */
export class FrameTooLarge extends Error {
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
