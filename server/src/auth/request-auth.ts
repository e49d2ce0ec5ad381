/**
 * Who may open the WebSocket (and read /metrics): decided in an onRequest
 * hook, before any upgrade (after the Host check, host-check.ts). A foreign
 * browser Origin gets 403; a missing or wrong token gets 401.
 *
 * The token can come three ways: `Authorization: Bearer <token>` (agents,
 * the Node SDK); a WebSocket subprotocol `execmux.bearer.<base64url(token)>`
 * offered next to `execmux` (browsers cannot set headers; Kubernetes does the
 * same); or `?token=` in the URL (weaker: URLs end up in histories and proxy
 * logs).
 */
import type { IncomingHttpHeaders } from "node:http";

export const SUBPROTOCOL = "execmux";
export const TOKEN_SUBPROTOCOL_PREFIX = "execmux.bearer.";

export interface AuthDecision {
  readonly status: 401 | 403;
  readonly message: string;
}

export type AuthResult =
  | { readonly allowed: true; /** Which token (its digest), when tokens are required. */ readonly tokenId: string | undefined }
  | ({ readonly allowed: false } & AuthDecision);

function offeredProtocols(headers: IncomingHttpHeaders): string[] {
  const header = headers["sec-websocket-protocol"];
  return (Array.isArray(header) ? header.join(",") : header ?? "")
    .split(",")
    .map((protocol) => protocol.trim())
    .filter(Boolean);
}

/** Every token the request carries, in the order they are tried. */
export function presentedTokens(headers: IncomingHttpHeaders, url: string): string[] {
  const tokens: string[] = [];
  const authorization = headers.authorization;
  const bearer = authorization ? /^Bearer\s+(.+)$/i.exec(authorization)?.[1] : undefined;
  if (bearer) tokens.push(bearer.trim());
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
 * Same origin (a page the daemon serves: same scheme, host and port), an
 * allowed origin, or no Origin at all (not a browser). `secure`: the request
 * came over TLS.
 */
export function originAllowed(headers: IncomingHttpHeaders, allowed: readonly string[], secure: boolean): boolean {
  const origin = headers.origin;
  if (origin === undefined) return true;
  if (allowed.includes("*")) return true;
  const normalized = normalizedOrigin(origin);
  if (normalized === undefined) return false;
  if (allowed.some((entry) => normalizedOrigin(entry) === normalized)) return true;
  const host = headers.host;
  return host !== undefined && normalizedOrigin(`${ownScheme(headers, secure)}://${host}`) === normalized;
}

export interface AuthOptions {
  readonly allowedOrigins: readonly string[];
  /** The request came over TLS. */
  readonly secure: boolean;
  readonly tokensRequired: boolean;
  /** The matched token's id, or undefined for a wrong one. */
  identify(token: string): string | undefined;
}

export function authorize(headers: IncomingHttpHeaders, url: string, options: AuthOptions): AuthResult {
  if (!originAllowed(headers, options.allowedOrigins, options.secure)) {
    return { allowed: false, status: 403, message: "origin not allowed" };
  }
  if (!options.tokensRequired) return { allowed: true, tokenId: undefined };
  // Every candidate is checked, so timing does not tell which transport matched.
  let tokenId: string | undefined;
  for (const token of presentedTokens(headers, url)) tokenId = options.identify(token) ?? tokenId;
  return tokenId !== undefined ? { allowed: true, tokenId } : { allowed: false, status: 401, message: "missing or invalid token" };
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
