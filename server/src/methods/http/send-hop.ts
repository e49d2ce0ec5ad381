/**
 * One HTTP exchange, up to the response head, over node:http. node:http
 * rather than fetch: fetch folds repeated headers, sorts them, adds its own
 * (user-agent, accept-language, sec-fetch-mode) and decompresses bodies,
 * none of which upstream's reqwest does; node:http writes a header array
 * exactly as given and hands back the raw response headers, in order, with
 * their bytes (latin1), so non-ASCII values can be told apart. Proxies are
 * done here (absolute-form for http targets, CONNECT for https), since Node
 * 20 has no proxy support of its own.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { Readable } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import type { OutgoingRequest, WireHeader } from "./outgoing-request.js";
import { openTunnel } from "./proxy-tunnel.js";
import { bareHost, routeFor, type Environment } from "./proxy-route.js";
import { trustedRoots } from "./tls-roots.js";

export interface Exchange {
  readonly response: IncomingMessage;
  /** The response body (empty for a 101 or CONNECT answer, whose socket is closed). */
  readonly body: Readable;
  /** Closes the exchange's connection: for a response whose body is not wanted. */
  discard(): void;
}

/**
 * hyper's limit on a response head (8 KiB + 100 x 4 KiB): Node's default of
 * 16 KiB would refuse heads upstream accepts; the bound keeps a hostile
 * server from growing the daemon's memory with an endless head.
 */
const MAX_RESPONSE_HEAD_BYTES = 417_792;

/** Methods Node frames with chunked encoding when no length is given; upstream sends an empty body as nothing at all. */
const NODE_CHUNKS_BY_DEFAULT = (method: string) => !["GET", "HEAD", "DELETE", "OPTIONS", "TRACE", "CONNECT"].includes(method.toUpperCase());

export async function sendHop(request: OutgoingRequest, signal: AbortSignal, env: Environment): Promise<Exchange> {
  signal.throwIfAborted();
  const { url } = request;
  const route = routeFor(url, env);
  if (route.kind === "unsupported") throw new Error(`proxy ${route.proxy} is not supported (only http:// proxies are)`);
  const headers = wireHeaders(request);
  const target = { host: bareHost(url.hostname), port: Number(url.port) || (url.protocol === "https:" ? 443 : 80) };
  const common: RequestOptions = { method: request.method, maxHeaderSize: MAX_RESPONSE_HEAD_BYTES, agent: false };
  let outgoing: ClientRequest;
  if (route.kind === "proxy" && url.protocol === "http:") {
    // Absolute-form through the proxy, as reqwest sends plain-http requests to a proxy.
    const proxyHeaders = [...headers, ...proxyAuthorization(route.proxy)];
    const proxy = { host: bareHost(route.proxy.hostname), port: Number(route.proxy.port) || 80 };
    outgoing = httpRequest({ ...common, ...proxy, path: absoluteForm(url), headers: flat(proxyHeaders) });
  } else {
    const ca = url.protocol === "https:" ? trustedRoots(env) : undefined;
    const servername = isIP(target.host) === 0 ? target.host : undefined;
    const path = `${url.pathname}${url.search}`;
    if (route.kind === "proxy") {
      const tunnel = await openTunnel(route.proxy, target, proxyAuthorization(route.proxy), signal);
      const secure = tlsConnect({ socket: tunnel, servername, ca, ALPNProtocols: ["http/1.1"] });
      outgoing = httpRequest({ ...common, agent: undefined, createConnection: () => secure, path, headers: flat(headers) });
    } else {
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      outgoing = send({ ...common, ...target, servername, ca, path, headers: flat(headers) });
    }
  }
  return exchangeOf(outgoing, request.body, signal);
}

/** The client's headers, then what reqwest adds when they are absent: accept, host, basic auth from the URL, the body's length. */
function wireHeaders(request: OutgoingRequest): WireHeader[] {
  const { url, body, method } = request;
  // The body's framing is the daemon's to state: a client's content-length or transfer-encoding could contradict it.
  const headers = request.headers.filter(([name]) => name !== "content-length" && name !== "transfer-encoding");
  const has = (name: string) => headers.some(([present]) => present === name);
  if (!has("accept")) headers.push(["accept", "*/*"]);
  if (!has("host")) headers.push(["host", url.host]);
  if (!has("authorization") && (url.username || url.password)) {
    headers.push(["authorization", basic(url.username, url.password)]);
  }
  if (body && body.length > 0) headers.push(["content-length", String(body.length)]);
  else if (NODE_CHUNKS_BY_DEFAULT(method)) headers.push(["content-length", "0"]);
  return headers;
}

function proxyAuthorization(proxy: URL): WireHeader[] {
  return proxy.username || proxy.password ? [["proxy-authorization", basic(proxy.username, proxy.password)]] : [];
}

const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${percentDecoded(username)}:${percentDecoded(password)}`).toString("base64")}`;

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The target URL as a proxy wants it: no credentials, no fragment. */
function absoluteForm(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}${url.search}`;
}

const flat = (headers: readonly WireHeader[]): string[] => headers.flat();

/** Sends the body and resolves at the response head; `signal` aborts the exchange at any point, body included. */
function exchangeOf(outgoing: ClientRequest, body: Buffer | undefined, signal: AbortSignal): Promise<Exchange> {
  const discard = () => outgoing.destroy();
  const onAbort = () => outgoing.destroy(new Error("http/request aborted"));
  signal.addEventListener("abort", onAbort, { once: true });
  outgoing.once("close", () => signal.removeEventListener("abort", onAbort));
  return new Promise<Exchange>((resolve, reject) => {
    // Kept for the exchange's whole life: an abort after the head also ends in an 'error'.
    outgoing.on("error", reject);
    outgoing.once("response", (response: IncomingMessage) => resolve({ response, body: response, discard }));
    // A 101 answer, or the answer to a client's own CONNECT: Node hands over the socket instead of a body.
    const headOnly = (response: IncomingMessage, socket: { destroy(): void }) => {
      socket.destroy();
      resolve({ response, body: Readable.from([]), discard });
    };
    outgoing.once("upgrade", headOnly);
    outgoing.once("connect", headOnly);
    outgoing.end(body && body.length > 0 ? body : undefined);
  });
}
