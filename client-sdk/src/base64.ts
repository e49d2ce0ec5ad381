/**
 * Base64 for byte payloads, in Node (Buffer, fast) and browsers (atob/btoa),
 * without depending on either at type level.
 */
interface BufferLike {
  from(data: string, encoding: "base64"): Uint8Array;
  from(data: Uint8Array): { toString(encoding: "base64"): string };
}
const NodeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;
const { atob, btoa } = globalThis as unknown as { atob(data: string): string; btoa(data: string): string };

export function decodeBase64(text: string): Uint8Array {
  if (NodeBuffer) {
    const buffer = NodeBuffer.from(text, "base64");
    return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

export function encodeBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes).toString("base64");
  let binary = "";
  const step = 0x8000;
  for (let index = 0; index < bytes.length; index += step) {
    binary += String.fromCharCode(...bytes.subarray(index, index + step));
  }
  return btoa(binary);
}

const encoder = new TextEncoder();

/** Strings are sent as UTF-8. */
export function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? encoder.encode(data) : data;
}
