/**
 * Extension: `process/output` as one binary WebSocket frame instead of JSON
 * with base64, for clients that set `binaryOutput: true` in `initialize`.
 * Every other message stays JSON text. Layout (big-endian):
 *
 *   offset 0   u8   kind: 1 = process/output
 *   offset 1   u8   stream: 0 stdout, 1 stderr, 2 pty
 *   offset 2   u16  processId length in UTF-8 bytes (n)
 *   offset 4   u32  seq, high 32 bits
 *   offset 8   u32  seq, low 32 bits
 *   offset 12  n bytes processId (UTF-8)
 *   offset 12+n     the output bytes, unchanged
 */
import type { OutputStream } from "./schemas/index.js";

export const BINARY_OUTPUT_KIND = 1;
export const BINARY_HEADER_BYTES = 12;

const STREAM_CODES: Record<OutputStream, number> = { stdout: 0, stderr: 1, pty: 2 };
const STREAMS: readonly OutputStream[] = ["stdout", "stderr", "pty"];

export interface BinaryOutputFrame {
  processId: string;
  seq: number;
  stream: OutputStream;
  data: Uint8Array;
}

/** Writes the header for a frame into `target` (which must have room for it); returns its length. */
export function writeBinaryOutputHeader(target: Uint8Array, processIdUtf8: Uint8Array, seq: number, stream: OutputStream): number {
  const view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  view.setUint8(0, BINARY_OUTPUT_KIND);
  view.setUint8(1, STREAM_CODES[stream]);
  view.setUint16(2, processIdUtf8.length);
  view.setUint32(4, Math.floor(seq / 2 ** 32));
  view.setUint32(8, seq >>> 0);
  target.set(processIdUtf8, BINARY_HEADER_BYTES);
  return BINARY_HEADER_BYTES + processIdUtf8.length;
}

declare class TextDecoder {
  decode(bytes: Uint8Array): string;
}
const decoder = new TextDecoder();

/** Parses a binary frame; undefined when it is not a well-formed output frame. */
export function decodeBinaryOutputFrame(frame: Uint8Array): BinaryOutputFrame | undefined {
  if (frame.length < BINARY_HEADER_BYTES) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const stream = STREAMS[view.getUint8(1)];
  const idLength = view.getUint16(2);
  if (view.getUint8(0) !== BINARY_OUTPUT_KIND || !stream || frame.length < BINARY_HEADER_BYTES + idLength) return undefined;
  return {
    stream,
    seq: view.getUint32(4) * 2 ** 32 + view.getUint32(8),
    processId: decoder.decode(frame.subarray(BINARY_HEADER_BYTES, BINARY_HEADER_BYTES + idLength)),
    data: frame.subarray(BINARY_HEADER_BYTES + idLength),
  };
}
