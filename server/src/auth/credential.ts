/**
 * A kind of token the daemon accepts (`--token`/`--token-file`, upstream's
 * capability token, upstream's signed JWT), and upstream's words for each
 * refusal, so a client sees the same 401 body from either daemon.
 */

/** A token admitted, as the client it proves (identity.ts), or refused, with why (a Refusal, never the token). */
export type Verdict = { readonly identity: string; readonly refusal?: undefined } | { readonly identity?: undefined; readonly refusal: string };

export interface Credential {
  check(token: string): Promise<Verdict> | Verdict;
}

export const admitted = (identity: string): Verdict => ({ identity });
export const refused = (refusal: string): Verdict => ({ refusal });

/** The bodies of upstream's 401 answers (codex-rs ws auth), and one of ours. */
export const Refusal = {
  missingToken: "missing websocket bearer token",
  invalidAuthorizationHeader: "invalid authorization header",
  invalidToken: "invalid websocket bearer token",
  invalidJwt: "invalid websocket jwt",
  expiredJwt: "expired websocket jwt",
  jwtNotValidYet: "websocket jwt is not valid yet",
  /** Ours: upstream does not look at `iat`. */
  jwtIssuedInFuture: "websocket jwt was issued in the future",
  issuerMismatch: "websocket jwt issuer mismatch",
  audienceMismatch: "websocket jwt audience mismatch",
} as const;
