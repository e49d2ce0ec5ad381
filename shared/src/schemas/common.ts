/**
 * Building blocks every method family's schemas share. The daemon compiles
 * the schemas with ajv to validate every message; every TypeScript type in
 * the protocol is derived from them with `Static<>`, never written by hand.
 *
 * Two rules from upstream (Rust/serde) shape them all:
 * - optional fields also accept `null`, because serde serializes `None` as
 *   `null`;
 * - unknown fields are ignored, never refused (no protocol struct upstream
 *   denies them), so no params object sets `additionalProperties: false`.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Opt = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));

/** Strings that reach execve, the environment or a path must not hold NUL bytes. */
const NO_NUL = "^[^\\u0000]*$";
export const NoNulString = (options: { minLength?: number; maxLength?: number } = {}) =>
  Type.String({ ...options, pattern: NO_NUL });

/**
 * An unsigned integer that upstream declares as this Rust type: its serde
 * names the type in errors (`expected u64`), and refuses a number outside it
 * (negative, fractional, too large) as `invalid number` (server/src/rpc/params-error.ts).
 */
export const Unsigned = (rustType: "u16" | "u64" | "usize") =>
  Type.Integer({ minimum: 0, ...(rustType === "u16" ? { maximum: 65535 } : {}), serde: rustType });

export const Seq = Unsigned("u64");
/**
 * Standard base64, padded and canonical, as upstream's decoder demands; the
 * daemon registers the format (server/src/rpc/base64.ts, in the crate's words).
 */
export const Base64 = Type.String({ format: "standard-base64", description: "standard base64" });

/**
 * A path on the daemon's host: a `file:` URI as upstream sends
 * (`file:///home/u/proj`, percent-encoded), or, as an execmux leniency, a
 * native absolute path. Parsed and checked by the daemon (path-uri.ts).
 */
export const PathUriSchema = Type.String({ minLength: 1, maxLength: 16384 });

export const ProcessIdSchema = Type.String({ minLength: 1, maxLength: 256 });
export const SessionIdSchema = Type.String({ minLength: 1, maxLength: 128 });

/**
 * The params of a method that takes none (serde's unit): absent, `null` or
 * `{}`, as upstream; anything else, an object with members too, is refused.
 */
export const NoParamsSchema = Type.Union([Type.Object({}, { additionalProperties: false }), Type.Null()]);
export const EmptyResultSchema = Type.Object({});
export type EmptyResult = Static<typeof EmptyResultSchema>;
