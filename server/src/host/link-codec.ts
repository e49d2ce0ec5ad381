/**
 * The byte layout of the link to the native process host
 * (server/native/src/wire.h and proto.h, the other side of it): frames of
 * u32 length | u8 type | payload, little-endian, fields in a fixed order per
 * type. `Writer` builds a frame, `Reader` takes one apart.
 */

/** Message types (proto.h). */
export const Msg = {
  Hello: 1,
  Start: 2,
  Write: 3,
  CloseStdin: 4,
  Signal: 5,
  Terminate: 6,
  Resize: 7,
  Pause: 8,
  Limit: 9,
  Read: 10,
  Forget: 11,
  KillSession: 12,
  Session: 13,
  DropSession: 14,
  Shutdown: 15,
  Peer: 16,
  Ping: 17,
  List: 18,
  Leave: 19,
  Output: 101,
  Exited: 102,
  Closed: 103,
  Forgotten: 104,
  Log: 105,
  RestoreSession: 106,
  RestoreProcess: 107,
  RestoreEnd: 108,
  HelloOk: 120,
  Started: 121,
  StartFailed: 122,
  Written: 123,
  Answer: 124,
  ReadResult: 125,
  ListResult: 126,
  Refused: 127,
} as const;

/** The link version this daemon speaks (proto.h PROTOCOL_VERSION): the host refuses any other. */
export const LINK_VERSION = 2;

/** START flags (proto.h). */
export const StartFlag = { Tty: 1, PipeStdin: 2, Sandboxed: 4, NetworkSandbox: 8 } as const;

export class Writer {
  private buffer = Buffer.allocUnsafe(256);
  private length = 0;

  constructor(type: number) {
    this.u32(0);
    this.u8(type);
  }

  private room(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  u8(value: number): this {
    this.room(1);
    this.buffer[this.length++] = value;
    return this;
  }
  u16(value: number): this {
    this.room(2);
    this.buffer.writeUInt16LE(value, this.length);
    this.length += 2;
    return this;
  }
  u32(value: number): this {
    this.room(4);
    this.buffer.writeUInt32LE(value >>> 0, this.length);
    this.length += 4;
    return this;
  }
  i32(value: number): this {
    this.room(4);
    this.buffer.writeInt32LE(value, this.length);
    this.length += 4;
    return this;
  }
  /** Up to 2^53: seqs and sizes are. -1 (a "never" ttl) goes as all ones. */
  u64(value: number): this {
    this.room(8);
    this.buffer.writeBigUInt64LE(value < 0 ? 2n ** 64n - 1n : BigInt(value), this.length);
    this.length += 8;
    return this;
  }
  raw(bytes: Uint8Array): this {
    this.room(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
    return this;
  }
  bytes(bytes: Uint8Array): this {
    return this.u32(bytes.length).raw(bytes);
  }
  str(text: string): this {
    const length = Buffer.byteLength(text);
    this.u32(length);
    this.room(length);
    this.buffer.write(text, this.length, "utf8");
    this.length += length;
    return this;
  }
  strs(texts: readonly string[]): this {
    this.u32(texts.length);
    for (const text of texts) this.str(text);
    return this;
  }

  /** The finished frame. */
  done(): Buffer {
    this.buffer.writeUInt32LE(this.length - 4, 0);
    return this.buffer.subarray(0, this.length);
  }
}

export class LinkFormatError extends Error {}

export class Reader {
  private at = 0;

  constructor(private readonly payload: Buffer) {}

  private take(bytes: number): number {
    const at = this.at;
    if (at + bytes > this.payload.length) throw new LinkFormatError("a message from the process host ended early");
    this.at += bytes;
    return at;
  }
  u8(): number {
    return this.payload[this.take(1)]!;
  }
  u16(): number {
    return this.payload.readUInt16LE(this.take(2));
  }
  u32(): number {
    return this.payload.readUInt32LE(this.take(4));
  }
  i32(): number {
    return this.payload.readInt32LE(this.take(4));
  }
  u64(): number {
    return Number(this.payload.readBigUInt64LE(this.take(8)));
  }
  /** -1 for all ones (a "never" ttl). */
  i64(): number {
    return Number(this.payload.readBigInt64LE(this.take(8)));
  }
  bytes(): Buffer {
    const length = this.u32();
    const at = this.take(length);
    return this.payload.subarray(at, at + length);
  }
  str(): string {
    return this.bytes().toString("utf8");
  }
  /** What is left, in place. */
  rest(): Buffer {
    return this.payload.subarray(this.take(this.payload.length - this.at));
  }
}
