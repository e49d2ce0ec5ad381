/**
 * The claims of a signed bearer token, read and judged as upstream does
 * (codex-rs ws auth): `exp` is required, `nbf`, `iss` and `aud` are checked
 * when present or configured, with the same clock skew on both sides, in
 * whole seconds. Beyond upstream, `iat` in the future (past the skew) is
 * refused too. Pure: the caller verified the signature and gives the time.
 */
import { Refusal } from "./credential.js";

export interface JwtClaims {
  readonly exp: number;
  readonly nbf?: number;
  readonly iat?: number;
  readonly iss?: string;
  readonly aud?: string | readonly string[];
  /** Whom the token is for, and its id: with `iss`, which client it proves (identity.ts). Any JSON value, unchecked, as upstream ignores them. */
  readonly sub?: unknown;
  readonly jti?: unknown;
}

export interface ClaimExpectations {
  readonly issuer?: string;
  readonly audience?: string;
  readonly maxClockSkewSeconds: number;
}

/** Upstream reads these as i64: anything else is not a valid token. */
const isI64 = (value: unknown): value is number => Number.isInteger(value) && Math.abs(value as number) < 2 ** 63;
const absent = (value: unknown) => value === undefined || value === null;

/** The claims, or undefined when the payload does not have upstream's shape (not an object, no integer exp, ...). */
export function parseClaims(payload: Uint8Array): JwtClaims | undefined {
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload));
  } catch {
    return undefined;
  }
  if (typeof claims !== "object" || claims === null || Array.isArray(claims)) return undefined;
  const { exp, nbf, iat, iss, aud, sub, jti } = claims as Record<string, unknown>;
  if (!isI64(exp)) return undefined;
  if (!absent(nbf) && !isI64(nbf)) return undefined;
  if (!absent(iat) && !(typeof iat === "number" && Number.isFinite(iat))) return undefined;
  if (!absent(iss) && typeof iss !== "string") return undefined;
  const audience = absent(aud) || typeof aud === "string" || (Array.isArray(aud) && aud.every((entry) => typeof entry === "string"));
  if (!audience) return undefined;
  return {
    exp,
    ...(absent(nbf) ? {} : { nbf: nbf as number }),
    ...(absent(iat) ? {} : { iat: iat as number }),
    ...(absent(iss) ? {} : { iss: iss as string }),
    ...(absent(aud) ? {} : { aud: aud as string | string[] }),
    ...(absent(sub) ? {} : { sub }),
    ...(absent(jti) ? {} : { jti }),
  };
}

/** Undefined when the claims admit the request at `nowSeconds`; otherwise upstream's words for why not. */
export function claimsRefusal(claims: JwtClaims, expected: ClaimExpectations, nowSeconds: number): string | undefined {
  const skew = expected.maxClockSkewSeconds;
  if (nowSeconds > claims.exp + skew) return Refusal.expiredJwt;
  if (claims.nbf !== undefined && nowSeconds < claims.nbf - skew) return Refusal.jwtNotValidYet;
  if (claims.iat !== undefined && nowSeconds < claims.iat - skew) return Refusal.jwtIssuedInFuture;
  if (expected.issuer !== undefined && claims.iss !== expected.issuer) return Refusal.issuerMismatch;
  if (expected.audience !== undefined) {
    const { aud } = claims;
    const named = typeof aud === "string" ? aud === expected.audience : (aud?.includes(expected.audience) ?? false);
    if (!named) return Refusal.audienceMismatch;
  }
  return undefined;
}
