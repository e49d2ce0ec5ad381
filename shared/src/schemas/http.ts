/**
 * The http family: `http/request` (an HTTP request made by the executor, its
 * response buffered in the reply or streamed as `http/request/bodyDelta`
 * notifications). Upstream's nullability is followed field by field: serde
 * refuses `null` for `headers`, `redirectPolicy`, `requestId` and
 * `streamResponse`, and accepts it for `bodyBase64` and `timeoutMs`.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Base64, Nullable, Opt } from "./common.js";

import { MAX_HTTP_BODY_DELTA_BYTES } from "../limits.js";

export { MAX_HTTP_BODY_DELTA_BYTES };

export const HttpHeaderSchema = Type.Object({
  name: Type.String(),
  value: Type.String(),
  /**
   * Capability httpHeaderEnvVars: the value of this environment variable of
   * the executor is appended to `value` (`"Bearer "` + a token the client
   * never sees). Missing, empty, or one the executor keeps to itself
   * (Codex's own credentials, every EXECMUX_* variable) is -32602.
   */
  valueEnvVar: Opt(Type.String()),
});

export const HttpRedirectPolicySchema = Type.Union([Type.Literal("follow"), Type.Literal("stop")]);

export const HttpRequestParamsSchema = Type.Object({
  method: Type.String(),
  url: Type.String(),
  /** Sent in this order, repeats kept. */
  headers: Type.Optional(Type.Array(HttpHeaderSchema)),
  /**
   * Standard base64 with padding; decoded (and refused in upstream's words,
   * the base64 crate's DecodeError alone) by the daemon, as fs/writeFile's
   * dataBase64: a schema pattern would answer in ajv's words instead.
   */
  bodyBase64: Opt(Type.String()),
  /** The whole exchange, body included; absent or null: no timeout. */
  timeoutMs: Opt(Type.Integer({ minimum: 0 })),
  /** Default `follow` (at most 10 redirects). */
  redirectPolicy: Type.Optional(HttpRedirectPolicySchema),
  /** Names the body's notifications; a streamed one's id is reserved until its terminal frame. */
  requestId: Type.String(),
  streamResponse: Type.Optional(Type.Boolean()),
});

export const HttpResponseHeaderSchema = Type.Object({ name: Type.String(), value: Type.String() });

export const HttpRequestResultSchema = Type.Object({
  status: Type.Integer({ minimum: 0, maximum: 65535 }),
  /** Lowercase names, wire order; values that are not visible ASCII are dropped, as upstream. */
  headers: Type.Array(HttpResponseHeaderSchema),
  /** Empty when the body is streamed. */
  bodyBase64: Base64,
});

/**
 * One slice of a streamed body. Seqs start at 1 and have no holes; the last
 * frame has `done: true`, an empty delta, and `error` set only when the body
 * could not be read to its end. `done` and `error` are always present.
 */
export const HttpRequestBodyDeltaSchema = Type.Object({
  requestId: Type.String(),
  seq: Type.Integer({ minimum: 1 }),
  deltaBase64: Base64,
  done: Type.Boolean(),
  error: Nullable(Type.String()),
});

export type HttpHeader = Static<typeof HttpHeaderSchema>;
export type HttpResponseHeader = Static<typeof HttpResponseHeaderSchema>;
export type HttpRedirectPolicy = Static<typeof HttpRedirectPolicySchema>;
export type HttpRequestParams = Static<typeof HttpRequestParamsSchema>;
export type HttpRequestResult = Static<typeof HttpRequestResultSchema>;
export type HttpRequestBodyDelta = Static<typeof HttpRequestBodyDeltaSchema>;
