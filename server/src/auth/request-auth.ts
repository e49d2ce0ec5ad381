/**
 * Who may open the WebSocket (and read /metrics): decided in an onRequest
 * hook, before any upgrade (after the Host check, host-check.ts). A foreign
 * browser Origin gets 403; a missing or wrong token gets 401 with upstream's
 * words for why.
 *
 * The token can come three ways: `Authorization: Bearer <token>` (agents,
 * the Node SDK, Codex); a WebSocket subprotocol
 * `execmux.bearer.<base64url(token)>` offered next to `execmux` (browsers
 * cannot set headers; Kubernetes does the same); or `?token=` in the URL
 * (weaker: URLs end up in histories and proxy logs). Every configured kind of
 * token (credential.ts) is tried on each, and any one admits the request.
 */
import type { IncomingHttpHeaders } from "node:http";
import { Refusal, type Credential } from "./credential.js";
import { ANONYMOUS_IDENTITY } from "./identity.js";

export const SUBPROTOCOL = "execmux";
export const TOKEN_SUBPROTOCOL_PREFIX = "execmux.bearer.";

export interface AuthDecision {
  readonly status: 401 | 403;
  readonly message: string;
}

export type AuthResult =
  | { readonly allowed: true; /** Which client this is (identity.ts): the admitting credential's, or the anonymous one. */ readonly identity: string }
  | ({ readonly allowed: false } & AuthDecision);

function offeredProtocols(headers: IncomingHttpHeaders): string[] {
  const header = headers["sec-websocket-protocol"];
  return (Array.isArray(header) ? header.join(",") : header ?? "")
    .split(",")
    .map((protocol) => protocol.trim())
    .filter(Boolean);
}

/**
 * The Authorization header read as upstream reads it: the scheme up to the
 * first space, `Bearer` in any case, then a token that is not blank.
 */
export function readAuthorization(header: string | undefined): { kind: "absent" } | { kind: "malformed" } | { kind: "bearer"; token: string } {
  if (header === undefined) return { kind: "absent" };
  const space = header.indexOf(" ");
  if (space < 0 || header.slice(0, space).toLowerCase() !== "bearer") return { kind: "malformed" };
  const token = header.slice(space + 1).trim();
  return token === "" ? { kind: "malformed" } : { kind: "bearer", token };
}

/** Every token the request carries, in the order they are tried. */
export function presentedTokens(headers: IncomingHttpHeaders, url: string): string[] {
  const tokens: string[] = [];
  const authorization = readAuthorization(headers.authorization);
  if (authorization.kind === "bearer") tokens.push(authorization.token);
  for (const protocol of offeredProtocols(headers)) {
    if (!protocol.startsWith(TOKEN_SUBPROTOCOL_PREFIX)) continue;
    try {
      tokens.push(Buffer.from(protocol.slice(TOKEN_SUBPROTOCOL_PREFIX.length), "base64url").toString("utf8"));
    } catch {
      // not base64url: ignored
    }
  }
  const query = url.indexOf("?");
  const fromQuery = query >= 0 ? new URLSearchParams(url.slice(query + 1)).get("token") : null;
  if (fromQuery) tokens.push(fromQuery);
  return tokens;
}

/** `scheme://host[:port]` as browsers serialize an origin, or undefined when it is not one. */
function normalizedOrigin(text: string): string | undefined {
  try {
    const { origin } = new URL(text);
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * The scheme the daemon's own pages were loaded with: https over TLS, or
 * what a TLS-terminating proxy says in X-Forwarded-Proto. A page cannot set
 * that header on a WebSocket handshake, so it cannot use it to pass.
 */
function ownScheme(headers: IncomingHttpHeaders, secure: boolean): string {
  const forwarded = headers["x-forwarded-proto"];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim().toLowerCase();
  return first === "https" || first === "http" ? first : secure ? "https" : "http";
}

/**
 * The Host the client used, as a proxy in front reports it (X-Forwarded-Host,
 * its first entry), when the proxy rewrote Host to its upstream's address
 * (agent-sandbox's router sends `<id>.<namespace>.svc...:<port>` or the pod's
 * IP). Like X-Forwarded-Proto, a page cannot set it on a WebSocket handshake.
 */
export function forwardedHost(headers: IncomingHttpHeaders): string | undefined {
  const forwarded = headers["x-forwarded-host"];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim();
  return first ? first : undefined;
}

/**
 * Same origin (a page the daemon serves: same scheme, host and port, as the
 * daemon or the proxy in front of it saw the host), an allowed origin, or no
 * Origin at all (not a browser). `secure`: the request came over TLS.
 */
export function originAllowed(headers: IncomingHttpHeaders, allowed: readonly string[], secure: boolean): boolean {
  const origin = headers.origin;
  if (origin === undefined) return true;
  if (allowed.includes("*")) return true;
  const normalized = normalizedOrigin(origin);
  if (normalized === undefined) return false;
  if (allowed.some((entry) => normalizedOrigin(entry) === normalized)) return true;
  const scheme = ownScheme(headers, secure);
  return [headers.host, forwardedHost(headers)].some((host) => host !== undefined && normalizedOrigin(`${scheme}://${host}`) === normalized);
}

export interface AuthOptions {
  readonly allowedOrigins: readonly string[];
  /** The request came over TLS. */
  readonly secure: boolean;
  /** Every configured kind of token (credential.ts); none: only the Origin check applies. */
  readonly credentials: readonly Credential[];
}

/**
 * Who may pass, and as which client: the identity the admitting credential
 * gives (identity.ts), never the token or its spelling; without tokens,
 * every client is the one anonymous identity.
 */
export async function authorize(headers: IncomingHttpHeaders, url: string, options: AuthOptions): Promise<AuthResult> {
  if (!originAllowed(headers, options.allowedOrigins, options.secure)) {
    return { allowed: false, status: 403, message: "origin not allowed" };
  }
  if (options.credentials.length === 0) return { allowed: true, identity: ANONYMOUS_IDENTITY };
  const tokens = presentedTokens(headers, url);
  if (tokens.length === 0) {
    const malformed = readAuthorization(headers.authorization).kind === "malformed";
    return { allowed: false, status: 401, message: malformed ? Refusal.invalidAuthorizationHeader : Refusal.missingToken };
  }
  // Every token against every credential, so timing does not tell which one matched.
  const verdicts = await Promise.all(tokens.map((token) => Promise.all(options.credentials.map((credential) => credential.check(token)))));
  for (const forToken of verdicts) {
    const identity = forToken.find((verdict) => verdict.identity !== undefined)?.identity;
    if (identity !== undefined) return { allowed: true, identity };
  }
  // Why the first token failed, in the words of the last credential (upstream's mode when one is set).
  return { allowed: false, status: 401, message: verdicts[0]!.at(-1)!.refusal! };
}

/** The subprotocol to answer with: `execmux` if offered. A token is never echoed back. */
export function selectProtocol(protocols: Set<string>): string | false {
  return protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false;
}

/** The request URL without its query string, for logs (a token may be in it). */
export function redactedUrl(url: string): string {
  const query = url.indexOf("?");
  return query >= 0 ? `${url.slice(0, query)}?[redacted]` : url;
}
