/**
 * Tokens for upstream's `--ws-auth signed-bearer-token` (an HS256 JWT), as
 * the daemon checks them (auth/jwt-claims.ts): `exp` always, `aud` naming
 * the sandbox the token is for (the daemon's --ws-audience, its pod's name),
 * `sub` saying whom it was issued to, `iat`, and `iss` when given.
 */
import { SignJWT } from "jose";

export interface MintRequest {
  /** The HMAC key: a sandbox's key (sandbox-key.ts) or a daemon's shared secret, as the bytes the daemon reads. */
  readonly key: Uint8Array;
  readonly audience: string;
  readonly subject?: string;
  readonly issuer?: string;
  readonly ttlSeconds: number;
  readonly nowSeconds?: number;
}

export async function mintToken(request: MintRequest): Promise<string> {
  const now = request.nowSeconds ?? Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setAudience(request.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + request.ttlSeconds);
  if (request.subject !== undefined) jwt.setSubject(request.subject);
  if (request.issuer !== undefined) jwt.setIssuer(request.issuer);
  return jwt.sign(request.key);
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** "90s", "15m", "12h", "7d" or a number of seconds; undefined when it is none of those. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNITS[match[2] || "s"]!;
  return Number.isSafeInteger(seconds) && seconds > 0 ? seconds : undefined;
}
