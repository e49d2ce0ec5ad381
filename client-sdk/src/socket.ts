/**
 * The WebSocket the SDK talks through: the platform's own in browsers (and
 * Node 22+), the `ws` package on older Node. Only the WHATWG surface is used,
 * so both behave the same.
 */
import { encodeBase64 } from "./base64.js";
import { routerHeaders, type RouterRoute } from "./router-route.js";

export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open", listener: () => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: (event: unknown) => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
}

export type WebSocketConstructor = new (url: string, protocols?: string | string[], options?: unknown) => WebSocketLike;

export interface SocketOptions {
  /**
   * The daemon's bearer token. Sent as `Authorization: Bearer` where headers
   * can be set (Node), otherwise (browsers) as the WebSocket subprotocol
   * `execmux.bearer.<base64url(token)>` offered next to `execmux`.
   */
  token?: string;
  /** A WebSocket implementation to use instead of the platform's. */
  WebSocket?: WebSocketConstructor;
  /** Extra handshake headers (Node only: browsers cannot set them). */
  headers?: Record<string, string>;
  /** Subprotocols to offer. */
  protocols?: string[];
  /**
   * Connect through agent-sandbox's sandbox-router (the URL is the
   * router's): sends the X-Sandbox-* headers, the router's token as
   * `Authorization`, and `token` as the subprotocol, since the router strips
   * `Authorization`. Node only: browsers cannot set headers (use the
   * router's path routing URL instead).
   */
  router?: RouterRoute;
}

export const OPEN = 1;

async function findWebSocket(options: SocketOptions): Promise<WebSocketConstructor> {
  if (options.WebSocket) return options.WebSocket;
  // `ws` lets Node send headers; a platform WebSocket cannot.
  const platform = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (platform && !options.headers) return platform;
  const moduleName = "ws";
  const loaded = (await import(/* @vite-ignore */ moduleName)) as { WebSocket?: WebSocketConstructor; default?: WebSocketConstructor };
  const constructor = loaded.WebSocket ?? loaded.default;
  if (!constructor) throw new Error("no WebSocket implementation: install the `ws` package");
  return constructor;
}

export const SUBPROTOCOL = "execmux";
export const TOKEN_SUBPROTOCOL_PREFIX = "execmux.bearer.";

/** base64url without padding, as a subprotocol must be a plain HTTP token. */
function base64url(text: string): string {
  return encodeBase64(new TextEncoder().encode(text)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Opens a socket and resolves once it is open, or rejects with why it could not. */
export async function openSocket(url: string, options: SocketOptions): Promise<WebSocketLike> {
  const platform = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  // Node without a platform WebSocket loads `ws`, which can send headers.
  const canSendHeaders = options.headers !== undefined || options.router !== undefined || (!options.WebSocket && !platform);
  let headers = options.router ? { ...options.headers, ...routerHeaders(options.router) } : options.headers;
  let protocols = options.protocols;
  if (options.token !== undefined) {
    // Through a router, Authorization is the router's (and never reaches the daemon).
    if (canSendHeaders && !options.router) headers = { ...headers, authorization: `Bearer ${options.token}` };
    else protocols = [...(protocols ?? []), SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + base64url(options.token)];
  }
  const WebSocketImpl = await findWebSocket({ ...options, ...(headers ? { headers } : {}) }).catch((error: Error) => {
    // Only `ws` sends headers: a browser has to name the sandbox in the URL.
    if (!options.router) throw error;
    throw new Error(`cannot send X-Sandbox-* headers here (${error.message}); in a browser, open the router's path routing URL (<prefix>/<namespace>/<id>/<port>/) instead`);
  });
  const socket = headers ? new WebSocketImpl(url, protocols, { headers }) : new WebSocketImpl(url, protocols);
  // Browsers default to Blob; `ws` hands out Buffers (Uint8Arrays) unless told otherwise.
  if (socket.binaryType === "blob") socket.binaryType = "arraybuffer";
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve());
    socket.addEventListener("error", (event) => {
      const message = (event as { message?: string; error?: Error }).error?.message ?? (event as { message?: string }).message;
      const reason = message?.includes(" 401")
        ? options.token === undefined
          ? "the daemon requires a token and none was given (HTTP 401)"
          : "the daemon refused the token (HTTP 401)"
        : message?.includes(" 403")
          ? "the daemon refused this origin (HTTP 403)"
          : message;
      reject(new Error(`cannot connect to ${url}${reason ? `: ${reason}` : ""}`));
    });
    socket.addEventListener("close", (event) => reject(new Error(`cannot connect to ${url}: closed (${event.code})`)));
  });
  return socket;
}
