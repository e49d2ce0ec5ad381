/**
 * What ws asks of the `bufferutil` addon (mask and unmask of frame
 * payloads), in JavaScript: the bundle resolves ws's optional
 * `require("bufferutil")` here (scripts/build-bundle.mjs). Without it ws
 * unmasks a client's frame a byte at a time on the event loop: a 12 MB
 * frame held it 23-38 ms on the benchmark VM, where four bytes at a time
 * take 5-6 ms. No native addon, so nothing to build or approve at install.
 */

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The 4-byte mask, rotated to start at `offset`, as one word in this machine's byte order (no allocation: it runs per frame). */
function maskWord(mask: Uint8Array, offset: number): number {
  const a = mask[offset & 3]!;
  const b = mask[(offset + 1) & 3]!;
  const c = mask[(offset + 2) & 3]!;
  const d = mask[(offset + 3) & 3]!;
  return (LITTLE_ENDIAN ? a | (b << 8) | (c << 16) | (d << 24) : (a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

/** XORs `buffer` with the repeating 4-byte `mask`, in place (RFC 6455 section 5.3). */
export function unmask(buffer: Uint8Array, mask: Uint8Array): void {
  const length = buffer.length;
  // Byte by byte up to a 4-byte boundary of the underlying memory, then a word at a time.
  const lead = Math.min(length, (4 - (buffer.byteOffset & 3)) & 3);
  let index = 0;
  for (; index < lead; index++) buffer[index]! ^= mask[index & 3]!;
  const words = (length - index) >>> 2;
  if (words > 0) {
    const word = maskWord(mask, index);
    const view = new Uint32Array(buffer.buffer, buffer.byteOffset + index, words);
    for (let at = 0; at < words; at++) view[at]! ^= word;
    index += words * 4;
  }
  for (; index < length; index++) buffer[index]! ^= mask[index & 3]!;
}

/** `length` bytes of `source`, masked, into `output` at `offset` (frames the daemon sends as a client). */
export function mask(source: Uint8Array, mask: Uint8Array, output: Uint8Array, offset: number, length: number): void {
  for (let index = 0; index < length; index++) output[offset + index] = source[index]! ^ mask[index & 3]!;
}
