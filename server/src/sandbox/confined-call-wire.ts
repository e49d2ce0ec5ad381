/** What confined-call.ts and its helper (confined-call-main.ts) exchange, as JSON. */

/** Sent as one line: with `hold`, the helper stays alive after its report until its stdin ends. */
export interface CallRequest {
  readonly module: string;
  readonly exportName: string;
  readonly args: unknown;
  readonly hold?: boolean;
}

export type CallReport =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly error: {
        readonly message: string;
        readonly code?: string;
        readonly errno?: number;
        readonly syscall?: string;
        readonly path?: string;
        /** Set when the function threw an RpcError (an answer in the protocol's own words, as upstream gives it). */
        readonly rpcCode?: number;
      };
    };

/** Buffers (and other byte arrays) become `{ "$base64": ... }`; everything else as JSON has it. */
export function encodeValue(value: unknown): unknown {
  if (value instanceof Uint8Array) return { $base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  if (Array.isArray(value)) return value.map(encodeValue);
  if (value && typeof value === "object") {
    if (value instanceof Date) return value.toISOString();
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, encodeValue(inner)]));
  }
  return value;
}

export function decodeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (value && typeof value === "object") {
    const record = value as Record<string, unknown>;
    if (typeof record.$base64 === "string" && Object.keys(record).length === 1) return Buffer.from(record.$base64, "base64");
    return Object.fromEntries(Object.entries(record).map(([key, inner]) => [key, decodeValue(inner)]));
  }
  return value;
}
