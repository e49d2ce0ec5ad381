/**
 * The HTTP side of the proxy: absolute-form requests and CONNECT tunnels,
 * served by proxy-chain (apify/proxy-chain); the gate decides each one.
 * A blocked request gets upstream's answer: 403 with `x-proxy-error` and,
 * for plain HTTP, upstream's JSON body, for CONNECT its one-line text.
 */
import { Agent } from "node:http";
import type { Socket } from "node:net";
import { RequestError, Server, type PrepareRequestFunctionResult } from "proxy-chain";
import type { CredentialBroker } from "./credential-broker.js";
import { requestPath } from "./credential-destination.js";
import type { Gate } from "./gate.js";
import { normalizeHost } from "./host-patterns.js";
import { blockedHeader, blockedMessage, type NetworkProtocol, type Verdict } from "./policy.js";

function blockedBody(verdict: Verdict, protocol: NetworkProtocol, host: string, port: number): string {
  return JSON.stringify({
    status: "blocked",
    host,
    reason: verdict.reason,
    decision: verdict.decision,
    source: verdict.source,
    protocol,
    port,
    message: blockedMessage(verdict),
  });
}

/** Where the client side of each accepted socket is (the relay tells it for sandboxed processes). */
export const CLIENT_ADDRESS = Symbol("client address");
/** Where a transparently redirected connection was headed (`host:port`, from the relay). */
export const TARGET_ADDRESS = Symbol("target address");
type TaggedSocket = Socket & { [CLIENT_ADDRESS]?: string };

/** Headers meant for the proxy, which upstream does not pass on (proxy-chain drops the standard hop-by-hop ones itself). */
function stripProxyHeaders(rawHeaders: string[]): void {
  for (let index = rawHeaders.length - 2; index >= 0; index -= 2) {
    if (rawHeaders[index]!.toLowerCase() === "proxy-connection") rawHeaders.splice(index, 2);
  }
}

/** The path of an absolute-form request target, as sent (no query; see requestPath). */
function rawPath(url: string): string {
  const authority = url.indexOf("://");
  const slash = authority < 0 ? url.indexOf("/") : url.indexOf("/", authority + 3);
  if (slash < 0) return "/";
  return requestPath(url.slice(slash));
}

/** A plain HTTP request to a custom provider's loopback destination gets the real value for its placeholder (credential-broker.ts headersFor). */
function substituteCredentials(broker: CredentialBroker, url: string, host: string, port: number, rawHeaders: string[]): void {
  const header = (name: string) => {
    for (let index = 0; index < rawHeaders.length; index += 2) if (rawHeaders[index]!.toLowerCase() === name) return rawHeaders[index + 1];
    return undefined;
  };
  for (const [name, value] of broker.headersFor({ scheme: "http", host, port, path: rawPath(url) }, header)) {
    for (let index = 0; index < rawHeaders.length; index += 2) if (rawHeaders[index]!.toLowerCase() === name) rawHeaders[index + 1] = value;
  }
}

export class HttpFront {
  private readonly proxy: Server;
  private readonly agent = new Agent({ keepAlive: false });

  /**
   * With `masking`, CONNECTs to a credential's HTTPS destinations are terminated here (mitm-front.ts), the rest are
   * tunnels; plain HTTP requests to a custom provider's loopback `http://` destination get the real value here.
   */
  constructor(gate: Gate, masking?: { readonly broker: CredentialBroker }) {
    this.proxy = new Server({
      port: 0,
      verbose: false,
      prepareRequestFunction: async ({ request, hostname, port, isHttp }): Promise<PrepareRequestFunctionResult> => {
        const protocol: NetworkProtocol = isHttp ? "http" : "https_connect";
        const socket = request.socket as TaggedSocket;
        const client = socket[CLIENT_ADDRESS] ?? `${socket.remoteAddress}:${socket.remotePort}`;
        const result = await gate.judge({ protocol, host: hostname, port, method: request.method ?? "GET", client });
        if (result.address === undefined) {
          const { verdict } = result;
          const header = { "x-proxy-error": blockedHeader(verdict) };
          if (!isHttp) throw new RequestError(blockedMessage(verdict), 403, header);
          return {
            customResponseFunction: () => ({
              statusCode: 403,
              headers: { ...header, "content-type": "application/json" },
              body: blockedBody(verdict, protocol, normalizeHost(hostname), port),
            }),
          };
        }
        const { address, family } = result;
        if (!isHttp && masking?.broker.requiresMitm(hostname, port)) {
          // Loaded, with the CA, only when a tunnel to a credential's host is asked for.
          const [{ mitmServer }, { mitmAuthority }] = await Promise.all([import("./mitm-front.js"), import("./mitm-ca.js")]);
          const server = await mitmServer({ host: normalizeHost(hostname), port, address, family }, masking.broker, await mitmAuthority());
          return { customConnectServer: server as never };
        }
        stripProxyHeaders(request.rawHeaders);
        if (isHttp && masking?.broker.interceptsHttp(hostname, port)) {
          substituteCredentials(masking.broker, request.url ?? "", normalizeHost(hostname), port, request.rawHeaders);
        }
        // The address the gate judged, never a second lookup; no pooled sockets outliving the client's.
        return {
          httpAgent: this.agent,
          dnsLookup: ((_host: string, options: unknown, callback: unknown) => {
            const done = (typeof options === "function" ? options : callback) as (...args: unknown[]) => void;
            const all = typeof options === "object" && options !== null && (options as { all?: boolean }).all;
            if (all) done(null, [{ address, family }]);
            else done(null, address, family);
          }) as never,
        };
      },
    });
    // Failures of one request are answered by proxy-chain itself; nothing to log per request.
    this.proxy.on("requestFailed", () => undefined);
  }

  /** Serves one accepted connection. */
  accept(socket: TaggedSocket): void {
    // proxy-chain refuses sockets without a peer address: a unix socket from the relay has none.
    if (!socket.remoteAddress) Object.defineProperty(socket, "remoteAddress", { value: "127.0.0.1" });
    this.proxy.server.emit("connection", socket);
    socket.resume();
  }

  close(): void {
    this.proxy.closeConnections();
    this.agent.destroy();
  }
}
