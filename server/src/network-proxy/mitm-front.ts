/**
 * A CONNECT tunnel to a host a masked credential belongs to is terminated
 * here: the process gets a certificate for that host from the proxy's CA
 * (mitm-ca.ts), each request it sends gets the real credential in place of
 * its placeholder (credential-broker.ts headersFor), and goes on over TLS to the
 * address the gate judged, verified against the system's roots and the
 * executor's SSL_CERT_FILE. Every other tunnel stays a plain byte stream.
 *
 * Bounds: Node's header limit (16 KiB) on each request the process sends;
 * bodies stream both ways with backpressure; the tunnel counts as the one
 * connection the process opened (the per-process and daemon budgets).
 */
import { createServer, request as httpsRequest, type Server } from "node:https";
import { checkServerIdentity } from "node:tls";
import type { CredentialBroker } from "./credential-broker.js";
import { requestPath } from "./credential-destination.js";
import type { MitmAuthority } from "./mitm-ca.js";
import { upstreamTrust } from "./mitm-ca.js";

const MAX_HEADER_BYTES = 16 * 1024;

export interface MitmTarget {
  readonly host: string;
  readonly port: number;
  readonly address: string;
  readonly family: 4 | 6;
}

/** A server (never listening) that serves the one tunnel proxy-chain hands it. */
export async function mitmServer(target: MitmTarget, broker: CredentialBroker, authority: MitmAuthority): Promise<Server> {
  const leaf = await authority.leafFor(target.host);
  const ca = upstreamTrust();
  const server = createServer({ key: leaf.key, cert: leaf.cert, maxHeaderSize: MAX_HEADER_BYTES }, (incoming, outgoing) => {
    const headers = { ...incoming.headers };
    delete headers["proxy-connection"];
    const header = (name: string) => {
      const value = headers[name];
      return typeof value === "string" ? value : undefined;
    };
    const path = requestPath(incoming.url ?? "/");
    for (const [name, value] of broker.headersFor({ scheme: "https", host: target.host, port: target.port, path }, header)) headers[name] = value;
    const onward = httpsRequest(
      {
        host: target.address,
        family: target.family,
        port: target.port,
        servername: /^[0-9.]+$/.test(target.host) || target.host.includes(":") ? undefined : target.host,
        // The certificate must name the host the process asked for, not the address connected to.
        checkServerIdentity: (_name, certificate) => checkServerIdentity(target.host, certificate),
        ca,
        method: incoming.method,
        path: incoming.url,
        headers,
        agent: false,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(outgoing);
      },
    );
    onward.on("error", () => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { "content-type": "text/plain" }).end("mitm upstream error");
      else outgoing.destroy();
    });
    incoming.pipe(onward);
  });
  server.on("tlsClientError", (_error, socket) => socket.destroy());
  server.on("clientError", (_error, socket) => socket.destroy());
  return server;
}
