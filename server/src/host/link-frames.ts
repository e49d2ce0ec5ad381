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
  /**
   * Control link, host to front: drop this client (its link number) at once,
   * without a closing handshake. Not on the client's own link, where it
   * would wait behind output the client does not read.
   */
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

/**
 * Writes one frame without first copying a message into it: the header,
 * then the message as it is (a string is encoded once, by the socket). A
 * reply of many megabytes would otherwise exist three times at once.
 */
export function writeFrame(socket: { cork(): void; uncork(): void; write(data: Buffer | string, callback?: (error?: Error | null) => void): boolean }, kind: FrameKind, message: Buffer | string, callback?: (error?: Error | null) => void): boolean {
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  header.writeUInt32BE((typeof message === "string" ? Buffer.byteLength(message) : message.length) + 1, 0);
  header.writeUInt8(kind, 4);
  socket.cork();
  socket.write(header);
  const more = socket.write(message, callback);
  socket.uncork();
  return more;
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

/**
 * Cuts a byte stream into frames as FrameReader does, but hands a client's
 * message (Text, Binary) on piece by piece as its bytes arrive, `last` on
 * the final piece: the front sends the pieces as WebSocket fragments, so it
 * never holds a whole large reply, and stops reading mid-message when the
 * client does. Frames of other kinds are small and come whole.
 */
export class FramePieceReader {
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerBytes = 0;
  private kind: FrameKind = FrameKind.Text;
  /** Payload bytes of the current frame still to come; -1 between frames. */
  private remaining = -1;
  private whole: Buffer[] = [];

  constructor(
    private readonly maxFrameBytes: number,
    private readonly onPiece: (kind: FrameKind, piece: Buffer, last: boolean) => void,
  ) {}

  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length || this.remaining === 0) {
      if (this.remaining < 0) {
        const take = Math.min(HEADER_BYTES - this.headerBytes, chunk.length - offset);
        chunk.copy(this.header, this.headerBytes, offset, offset + take);
        this.headerBytes += take;
        offset += take;
        if (this.headerBytes < HEADER_BYTES) return;
        this.headerBytes = 0;
        const length = this.header.readUInt32BE(0);
        if (length === 0 || length - 1 > this.maxFrameBytes) throw new FrameTooLarge(length - 1, this.maxFrameBytes);
        this.kind = this.header.readUInt8(4) as FrameKind;
        this.remaining = length - 1;
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - offset);
      const piece = chunk.subarray(offset, offset + take);
      offset += take;
      this.remaining -= take;
      const last = this.remaining === 0;
      if (last) this.remaining = -1;
      if (this.kind === FrameKind.Text || this.kind === FrameKind.Binary) {
        if (take > 0 || last) this.onPiece(this.kind, piece, last);
      } else {
        this.whole.push(piece);
        if (last) this.onPiece(this.kind, Buffer.concat(this.whole.splice(0)), true);
      }
    }
  }
}
