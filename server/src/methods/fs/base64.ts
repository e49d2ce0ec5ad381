/**
 * Standard base64 with canonical padding, decoded as strictly as upstream's
 * `base64::STANDARD` engine (Rust's base64 crate) and refused in its words:
 * Node's own decoder skips anything it does not understand, which would
 * write a file (or stdin) the client did not send. Upstream decodes
 * process/write's chunk as it reads the params (-32602, before the handshake
 * check) and fs/writeFile's dataBase64 in its handler (so rpc/ uses it too).
 */

const PAD = 0x3d; // "="
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const SYMBOL_VALUES = new Int8Array(256).fill(-1);
for (let index = 0; index < ALPHABET.length; index++) SYMBOL_VALUES[ALPHABET.charCodeAt(index)] = index;

const CANONICAL = /^[A-Za-z0-9+/]*={0,2}$/;

/** Whether the symbol before the padding carries no bits the padding says to drop. */
function hasCanonicalTail(text: string): boolean {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  if (padding === 0) return true;
  const lastSymbol = SYMBOL_VALUES[text.charCodeAt(text.length - padding - 1)] ?? -1;
  return (lastSymbol & (padding === 2 ? 0x0f : 0x03)) === 0;
}

export type Base64Result = { readonly bytes: Buffer } | { readonly error: string };

export function decodeStandardBase64(text: string): Base64Result {
  const error = standardBase64Error(text);
  return error === undefined ? { bytes: Buffer.from(text, "base64") } : { error };
}

/**
 * Why `text` is not canonical standard base64, or undefined when it is:
 * params validation uses it for the fields upstream's serde decodes as it
 * reads the params (process/write's chunk, rpc/validators.ts).
 */
export function standardBase64Error(text: string): string | undefined {
  if (text.length % 4 === 0 && CANONICAL.test(text) && hasCanonicalTail(text)) return undefined;
  return decodeError(Buffer.from(text, "utf8"));
}

const invalidByte = (offset: number, byte: number) => `Invalid symbol ${byte}, offset ${offset}.`;

/**
 * Why `input` is not canonical standard base64, in the order the crate's
 * decoder finds it (general_purpose/decode.rs and decode_suffix.rs): offsets
 * and symbols are UTF-8 bytes, as the crate sees the string.
 */
function decodeError(input: Buffer): string {
  const length = input.length;
  const remainder = length % 4;
  const last = input[length - 1] ?? 0;
  // The crate reports a stray final byte (a newline, say) first.
  if (remainder === 1 && last !== PAD && SYMBOL_VALUES[last] === -1) return invalidByte(length - 1, last);
  // Every quad but the last, even when the last is complete: it may hold padding.
  const quadsEnd = remainder === 0 ? Math.max(0, length - 4) : length - remainder;
  for (let offset = 0; offset < quadsEnd; offset++) {
    const byte = input[offset] ?? 0;
    if (SYMBOL_VALUES[byte] === -1) return invalidByte(offset, byte);
  }
  let symbols = 0;
  let padding = 0;
  let firstPadding = 0;
  let lastSymbol = 0;
  let bits = 0;
  for (let index = 0; quadsEnd + index < length; index++) {
    const byte = input[quadsEnd + index] ?? 0;
    if (byte === PAD) {
      // Padding needs at least two symbols before it in its quad.
      if (index < 2) return invalidByte(quadsEnd + index, byte);
      if (padding === 0) firstPadding = index;
      padding++;
    } else if (padding > 0) {
      return invalidByte(quadsEnd + firstPadding, PAD);
    } else {
      const value = SYMBOL_VALUES[byte] ?? -1;
      if (value === -1) return invalidByte(quadsEnd + index, byte);
      lastSymbol = byte;
      bits |= value << (26 - 6 * symbols);
      symbols++;
    }
  }
  if (length > 0 && symbols < 2) return `Invalid input length: ${quadsEnd + symbols}`;
  if ((padding + symbols) % 4 !== 0) return "Invalid padding";
  const decodedBytes = Math.floor((symbols * 6) / 8);
  if ((bits & (0xffffffff >>> (decodedBytes * 8))) !== 0) {
    return `Invalid last symbol ${lastSymbol}, offset ${quadsEnd + symbols - 1}.`;
  }
  // Unreachable for input the fast path refused; kept so the function is total.
  return "Invalid padding";
}
