/**
 * Why bytes are not UTF-8, in Rust's words (core::str::Utf8Error's Display):
 * upstream says so in a discovery warning, `capability file X is not UTF-8:
 * invalid utf-8 sequence of 1 bytes from index 2`.
 */
import { isUtf8 } from "node:buffer";

/** Rust's error_len for the sequence starting at `start`: its invalid length (1 to 3), or undefined when the input ends inside it. */
function invalidSequenceLength(bytes: Uint8Array, start: number): number | undefined {
  const first = bytes[start]!;
  const at = (offset: number) => bytes[start + offset];
  const isContinuation = (byte: number) => byte >= 0x80 && byte <= 0xbf;
  const width = first >= 0xc2 && first <= 0xdf ? 2 : first >= 0xe0 && first <= 0xef ? 3 : first >= 0xf0 && first <= 0xf4 ? 4 : 0;
  if (width === 0) return 1;
  const second = at(1);
  if (second === undefined) return undefined;
  if (width === 2) return isContinuation(second) ? 0 : 1;
  const secondFits =
    width === 3
      ? (first === 0xe0 && second >= 0xa0 && second <= 0xbf) ||
        (first >= 0xe1 && first <= 0xec && isContinuation(second)) ||
        (first === 0xed && second >= 0x80 && second <= 0x9f) ||
        (first >= 0xee && isContinuation(second))
      : (first === 0xf0 && second >= 0x90 && second <= 0xbf) ||
        (first >= 0xf1 && first <= 0xf3 && isContinuation(second)) ||
        (first === 0xf4 && second >= 0x80 && second <= 0x8f);
  if (!secondFits) return 1;
  for (let offset = 2; offset < width; offset++) {
    const byte = at(offset);
    if (byte === undefined) return undefined;
    if (!isContinuation(byte)) return offset;
  }
  return 0;
}

/** Undefined for valid UTF-8; else Rust's message for the first invalid sequence. */
export function utf8Error(bytes: Uint8Array): string | undefined {
  // Valid text, the usual case, is checked natively; the walk below only words the error.
  if (isUtf8(bytes)) return undefined;
  let index = 0;
  while (index < bytes.length) {
    if (bytes[index]! < 0x80) {
      index++;
      continue;
    }
    const length = invalidSequenceLength(bytes, index);
    if (length === undefined) return `incomplete utf-8 byte sequence from index ${index}`;
    if (length > 0) return `invalid utf-8 sequence of ${length} bytes from index ${index}`;
    const first = bytes[index]!;
    index += first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : 2;
  }
  return undefined;
}
