/**
 * Turns one WebSocket frame into a message the connection can act on, and
 * builds replies in the dialect the client spoke (with or without
 * `"jsonrpc": "2.0"`).
 */
import { BINARY_HEADER_BYTES, writeBinaryOutputHeader } from "@execmux/shared/core";
import type { OutputStream, RequestId, RpcErrorBody } from "@execmux/shared";
import { EncodedResult } from "../methods/encoded-result.js";
import { takeSlab } from "../process/slab-pool.js";
import { shapeViolation } from "./json-shape.js";
import { JSON_CHUNK_BYTES } from "./outbound.js";
import { Utf8Text } from "./transport.js";

export type Incoming =
  | { kind: "request"; id: RequestId; method: string; params: unknown; jsonrpc: boolean }
  | { kind: "notification"; method: string; params: unknown; jsonrpc: boolean }
  /** A reply from the client to a request the daemon sent (client-requests.ts), or to none. */
  | { kind: "response"; id: unknown; result?: unknown; error?: unknown }
  /** Not a JSON-RPC message at all; the connection words upstream's reply (id -1). */
  | { kind: "malformed"; detail: string };


const isRequestId = (value: unknown): value is RequestId =>
  (typeof value === "number" && Number.isFinite(value)) || typeof value === "string";

export function parseFrame(text: string): Incoming {
  // Refused before JSON.parse builds it: building is what costs, and the
  // counts are exact for any text JSON.parse accepts, so nothing built here
  // nests deeper than 128 (later code that recurses, a schema check or a
  // JSON.stringify, cannot overflow its stack).
  const tooCostly = shapeViolation(text);
  if (tooCostly) return { kind: "malformed", detail: tooCostly };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: "malformed", detail: (error as Error).message };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { kind: "malformed", detail: "expected a JSON-RPC object" };
  }
  const message = value as Record<string, unknown>;
  // Upstream ignores the member; a client that sends it gets replies with it.
  const jsonrpc = message.jsonrpc === "2.0";
  if (message.method === undefined && ("result" in message || "error" in message)) {
    return { kind: "response", id: message.id, result: message.result, error: message.error };
  }
  if (typeof message.method !== "string") {
    return { kind: "malformed", detail: "a message must have a string `method`, `result` or `error`" };
  }
  if (message.id === undefined || message.id === null) {
    return { kind: "notification", method: message.method, params: message.params, jsonrpc };
  }
  if (!isRequestId(message.id)) {
    return { kind: "malformed", detail: "`id` must be a number or a string" };
  }
  return { kind: "request", id: message.id, method: message.method, params: message.params, jsonrpc };
}

const prefix = (jsonrpc: boolean) => (jsonrpc ? '{"jsonrpc":"2.0",' : "{");

/**
 * `base64Result`: the method's result schema holds base64 (generated/methods.js); only then is it searched
 * for members to splice in, a search that cost as much as the stringifying for a 50-process listing.
 */
export function encodeResult(id: RequestId, result: unknown, jsonrpc: boolean, base64Result: boolean): string | Utf8Text {
  const head = `${prefix(jsonrpc)}"id":${JSON.stringify(id)},"result":`;
  if (result instanceof EncodedResult) return `${head}${result.json}}`;
  return base64Result && hasLargeBase64(result) ? spliceLargeBase64(head, result) : `${head}${JSON.stringify(result)}}`;
}

/** A result member this long is spliced into the reply's bytes instead of being copied by JSON.stringify. */
const LARGE_BASE64_CHARS = 64 * 1024;
/** Result members that hold base64 by their schema (shared/src/schemas: `Base64`), never anything to escape. */
const isBase64Member = (key: string) => key.endsWith("Base64") || key === "chunk";
/** How deep a result is searched for them: process/read's are at result.chunks[i].chunk. */
const SEARCH_DEPTH = 3;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

function hasLargeBase64(value: unknown, depth = 0): boolean {
  if (depth > SEARCH_DEPTH) return false;
  if (Array.isArray(value)) return value.some((item) => hasLargeBase64(item, depth + 1));
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(
    ([key, member]) => (isBase64Member(key) && typeof member === "string" && member.length >= LARGE_BASE64_CHARS) || hasLargeBase64(member, depth + 1),
  );
}

type Piece = { text: string; raw: boolean };

/** `value` as JSON pieces: large base64 members raw (copied in as they are), everything else through JSON.stringify. */
function jsonPieces(value: unknown, out: Piece[], depth: number): void {
  if (depth <= SEARCH_DEPTH && Array.isArray(value)) {
    out.push({ text: "[", raw: false });
    value.forEach((item, index) => {
      if (index > 0) out.push({ text: ",", raw: false });
      // JSON.stringify writes null for what it cannot write in an array.
      if (item === undefined || typeof item === "function") out.push({ text: "null", raw: false });
      else jsonPieces(item, out, depth + 1);
    });
    out.push({ text: "]", raw: false });
    return;
  }
  if (depth <= SEARCH_DEPTH && isPlainObject(value)) {
    out.push({ text: "{", raw: false });
    let separator = "";
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined || typeof member === "function") continue;
      out.push({ text: `${separator}${JSON.stringify(key)}:`, raw: false });
      separator = ",";
      if (isBase64Member(key) && typeof member === "string" && member.length >= LARGE_BASE64_CHARS) {
        out.push({ text: '"', raw: false }, { text: member, raw: true }, { text: '"', raw: false });
      } else {
        jsonPieces(member, out, depth + 1);
      }
    }
    out.push({ text: "}", raw: false });
    return;
  }
  out.push({ text: JSON.stringify(value), raw: false });
}

/**
 * A reply whose result holds large base64 members (fs/readFile of a 10 MB
 * file: 13 MB of base64; process/read: a megabyte across its chunks),
 * written into one buffer. Through JSON.stringify each member was copied
 * whole twice more (stringified, then flattened out of the template
 * string) before the transport copied it a third time into bytes: a client
 * asking for many such replies held that much per reply.
 */
function spliceLargeBase64(head: string, result: unknown): Utf8Text {
  const pieces: Piece[] = [{ text: head, raw: false }];
  jsonPieces(result, pieces, 0);
  pieces.push({ text: "}", raw: false });
  const length = pieces.reduce((sum, piece) => sum + (piece.raw ? piece.text.length : Buffer.byteLength(piece.text)), 0);
  const frame = Buffer.allocUnsafe(length);
  let at = 0;
  for (const piece of pieces) at += frame.write(piece.text, at, piece.raw ? "latin1" : "utf8");
  return new Utf8Text(frame);
}

export function encodeError(id: RequestId, error: RpcErrorBody, jsonrpc: boolean): string {
  return `${prefix(jsonrpc)}"id":${JSON.stringify(id)},"error":${JSON.stringify(error)}}`;
}

/** A request from the daemon to the client (network/policyRequest). */
export function encodeRequest(id: number, method: string, params: unknown, jsonrpc: boolean): string {
  return `${prefix(jsonrpc)}"id":${id},"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}

export function encodeNotification(method: string, params: unknown, jsonrpc: boolean): string {
  return `${prefix(jsonrpc)}"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}

/** `process/exited` or `process/closed`, for the session's owner and its observers alike. */
export function processEndNotification(
  processId: string,
  event: { readonly kind: "exited"; readonly seq: number; readonly exitCode: number } | { readonly kind: "closed"; readonly seq: number },
  sandboxDenied: boolean,
  jsonrpc: boolean,
): string {
  return event.kind === "exited"
    ? encodeNotification("process/exited", { processId, seq: event.seq, exitCode: event.exitCode, sandboxDenied }, jsonrpc)
    : encodeNotification("process/closed", { processId, seq: event.seq }, jsonrpc);
}

/**
 * `process/output` as a binary frame (extension; layout in
 * shared/src/binary-frame.ts). Live output needs none of this: the process
 * host sends each chunk already framed so (process-host.ts); a replayed one
 * is framed here.
 */
export function encodeBinaryOutput(processIdUtf8: Buffer, seq: number, stream: OutputStream, data: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(BINARY_HEADER_BYTES + processIdUtf8.length + data.length);
  const headerLength = writeBinaryOutputHeader(frame, processIdUtf8, seq, stream);
  data.copy(frame, headerLength);
  return frame;
}

/**
 * Where a large chunk's `process/output` is built: a pooled buffer
 * (slab-pool.ts) that fits the largest JSON chunk's base64 and a head,
 * returned once the socket has written the frame. A buffer of this size
 * allocated per frame, and the equally large temporary Node allocates for
 * a base64 string, came as fresh pages from the kernel more often than not
 * (glibc gives freed memory at the heap's top back): on the 2-core AMD VM
 * each first touch of a page cost 20-30 µs, and in a daemon's first
 * 256 MiB JSON stream these page faults (about 50,000, four fifths of them
 * in base64 encoding) doubled the daemon's CPU time.
 */
const OUTPUT_FRAME_SLAB_BYTES = 4 * Math.ceil(JSON_CHUNK_BYTES / 3) + 2048;
/** Smaller chunks are framed in a buffer of their own: Node's pool serves the smallest, and little is touched. */
const POOLED_FRAME_MIN_DATA_BYTES = 8 * 1024;
/** Base64 is encoded this much at a time (a multiple of 3, so the pieces join up), keeping Node's temporary small. */
const BASE64_PIECE_BYTES = 12 * 1024;

/**
 * `process/output` is the hot path: the base64 payload can be megabytes, and
 * there is nothing in it to escape, so it is spliced in rather than run
 * through JSON.stringify, and as bytes: base64 is ASCII, so its string is
 * copied in as it is (latin1), and only the short head needs UTF-8 (a
 * processId may hold any character). A large chunk's frame is a pooled slab,
 * held once for the caller, which releases it once it has handed the frame
 * on (Outbound holds its own until the socket wrote it).
 */
export function encodeOutputNotification(
  processIdJson: string,
  seq: number,
  stream: string,
  data: Uint8Array,
  jsonrpc: boolean,
): Utf8Text {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const head = `${prefix(jsonrpc)}"method":"process/output","params":{"processId":${processIdJson},"seq":${seq},"stream":"${stream}","chunk":"`;
  const headBytes = Buffer.byteLength(head);
  const length = headBytes + 4 * Math.ceil(bytes.length / 3) + OUTPUT_TAIL.length;
  const pooled = bytes.length >= POOLED_FRAME_MIN_DATA_BYTES && length <= OUTPUT_FRAME_SLAB_BYTES;
  const frame = pooled ? takeSlab(OUTPUT_FRAME_SLAB_BYTES) : Buffer.allocUnsafe(length);
  let at = frame.write(head, 0, "utf8");
  for (let start = 0; start < bytes.length; start += BASE64_PIECE_BYTES) {
    at += frame.write(bytes.toString("base64", start, start + BASE64_PIECE_BYTES), at, "latin1");
  }
  frame.write(OUTPUT_TAIL, at, "latin1");
  return new Utf8Text(pooled ? frame.subarray(0, length) : frame);
}

const OUTPUT_TAIL = '"}}';
