/**
 * Who a client is, for everything counted per client (sessions, connections,
 * descriptors, buffered bodies) and for whom a session belongs to: one
 * opaque string, decided by the credential that admitted the request and
 * carried unchanged from the auth hook to the connection and its sessions.
 *
 * It names the credential, never how it was sent: not the source address (a
 * loopback client can pick any 127.x.y.z), not the token's spelling (one JWT
 * signature has many base64url spellings). Each identity is a SHA-256 in hex
 * behind a prefix saying which kind of credential made it, so it is short,
 * fixed in length and never holds a token; the same credential gives the same
 * identity in every daemon, so a session outlives a restart of the listener.
 */
import { createHash } from "node:crypto";

/** Every client of a daemon that needs no token: they cannot be told apart, so they are one. */
export const ANONYMOUS_IDENTITY = "anonymous";

const digestHex = (parts: readonly string[]) => {
  const hash = createHash("sha256");
  // Length-prefixed, so no two lists of parts run together into the same bytes.
  for (const part of parts) hash.update(`${Buffer.byteLength(part, "utf8")}:${part}`, "utf8");
  return hash.digest("hex");
};

/** A `--token`/`--token-file` token: which token it is (its SHA-256, as the store keeps it). */
export function staticTokenIdentity(tokenDigest: Buffer): string {
  return `token:${digestHex(["token", tokenDigest.toString("hex")])}`;
}

/** Upstream's capability token: there is one, so every holder is the same client. */
export function capabilityTokenIdentity(tokenDigest: Buffer): string {
  return `capability:${digestHex(["capability", tokenDigest.toString("hex")])}`;
}

/**
 * A signed JWT: its verified issuer and subject, and its `jti` where present,
 * whatever the token's spelling or expiry. Claims that are absent count as
 * absent (null), any other value by its JSON.
 */
export function jwtIdentity(claims: { readonly iss?: unknown; readonly sub?: unknown; readonly jti?: unknown }): string {
  const part = (value: unknown) => (value === undefined || value === null ? "" : `=${JSON.stringify(value)}`);
  return `jwt:${digestHex(["jwt", part(claims.iss), part(claims.sub), part(claims.jti)])}`;
}
