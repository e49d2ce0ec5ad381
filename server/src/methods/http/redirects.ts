/**
 * redirectPolicy `follow`: redirects followed one hop at a time, each hop
 * routed on its own (a redirect to loopback goes direct, one away from it
 * may go through the proxy), with reqwest's rules for what a hop keeps.
 */
import type { HttpRedirectPolicy } from "@execmux/shared";
import { requestFailed, sendFailed } from "./errors.js";
import type { OutgoingRequest, WireHeader } from "./outgoing-request.js";
import type { Environment } from "./proxy-route.js";
import { sendHop, type Exchange } from "./send-hop.js";

/** reqwest's default policy: the 11th redirect fails the request. */
const MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Dropped on a 301, 302 or 303, which turn the request into a bodiless one. */
const BODY_HEADERS = new Set(["content-type", "content-encoding", "content-length", "transfer-encoding"]);
/** Dropped when a redirect leaves the origin: credentials belong to the host they were meant for, and so does a Host. */
const SENSITIVE_HEADERS = new Set(["authorization", "cookie", "cookie2", "proxy-authorization", "www-authenticate", "host"]);

export interface SendOptions {
  readonly policy: HttpRedirectPolicy;
  readonly signal: AbortSignal;
  readonly env: Environment;
  /** Told why a hop could not be sent (the message to the client does not say). */
  readonly onSendError: (url: URL, error: unknown) => void;
}

export async function sendFollowingRedirects(first: OutgoingRequest, options: SendOptions): Promise<Exchange> {
  let request = first;
  for (let redirects = 0; ; redirects++) {
    let exchange: Exchange;
    try {
      exchange = await sendHop(request, options.signal, options.env);
    } catch (error) {
      options.onSendError(request.url, error);
      throw sendFailed(withoutCredentials(request.url));
    }
    const next = options.policy === "follow" ? redirectOf(request, exchange) : undefined;
    if (!next) return exchange;
    exchange.discard();
    if (redirects === MAX_REDIRECTS) throw requestFailed("too many redirects");
    if (next.url.protocol !== "http:" && next.url.protocol !== "https:") {
      throw requestFailed(`redirect target uses unsupported URL scheme: ${next.url.protocol.slice(0, -1)}`);
    }
    request = next;
  }
}

/** The next hop, or undefined when the response is to be returned as it is (not a redirect, no usable Location). */
function redirectOf(previous: OutgoingRequest, { response }: Exchange): OutgoingRequest | undefined {
  const location = response.headers.location;
  if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || !location || !URL.canParse(location, previous.url.href)) return undefined;
  const url = new URL(location, previous.url);
  const bodiless = response.statusCode! <= 303;
  const method = bodiless && !["GET", "HEAD"].includes(previous.method.toUpperCase()) ? "GET" : previous.method;
  const sameOrigin = url.hostname === previous.url.hostname && portOf(url) === portOf(previous.url);
  const referer = refererFor(previous.url, url, sameOrigin);
  const headers: WireHeader[] = previous.headers.filter(
    ([name]) => !(bodiless && BODY_HEADERS.has(name)) && !(!sameOrigin && SENSITIVE_HEADERS.has(name)) && !(referer && name === "referer"),
  );
  if (referer) headers.unshift(["referer", referer]);
  return { method, url, headers, body: bodiless ? undefined : previous.body };
}

const portOf = (url: URL) => Number(url.port) || (url.protocol === "https:" ? 443 : 80);

/** The page a hop came from, as upstream sends it: the whole URL within an origin, only the origin across; none from https to http. */
function refererFor(from: URL, to: URL, sameOrigin: boolean): string | undefined {
  if (from.protocol === "https:" && to.protocol !== "https:") return undefined;
  if (!sameOrigin) return `${from.origin}/`;
  const referer = withoutCredentials(from);
  referer.hash = "";
  return referer.href;
}

export function withoutCredentials(url: URL): URL {
  const copy = new URL(url);
  copy.username = "";
  copy.password = "";
  return copy;
}
