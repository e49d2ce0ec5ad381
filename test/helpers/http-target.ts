/**
 * The loopback HTTP server that http/request cases point both servers at
 * (`<http>` in a frame). Its answers depend only on the request, so both
 * servers see the same thing; `/hold/KEY` keeps a body open until a request
 * to `/release/KEY` arrives, which lets a case keep a stream active without
 * a timer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

type Route = (request: IncomingMessage, body: Buffer, response: ServerResponse) => void;

export class HttpTarget {
  private server: Server | undefined;
  private readonly held = new Map<string, ServerResponse>();

  private host = "127.0.0.1";

  get origin(): string {
    if (!this.server) throw new Error("the HTTP target is not started");
    return `http://${this.host}:${(this.server.address() as AddressInfo).port}`;
  }

  /** On loopback, or on `host` (an address of this machine). */
  async start(host = "127.0.0.1"): Promise<void> {
    this.host = host;
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => this.route(request.url ?? "/")(request, Buffer.concat(chunks), response));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve));
  }

  async stop(): Promise<void> {
    for (const response of this.held.values()) response.destroy();
    this.held.clear();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private route(url: string): Route {
    const [, first, key] = url.split("/");
    switch (first) {
      case "hello":
        return (_request, _body, response) => response.writeHead(200, { "content-type": "text/plain", "x-test": "1" }).end("hello");
      case "echo":
        // Only what the client was asked to send: each client adds its own user-agent, accept, etc.
        return (request, body, response) => {
          const headers = request.rawHeaders.flatMap((name, index) =>
            index % 2 === 0 && /^x-|^content-type$/i.test(name) ? [[name.toLowerCase(), request.rawHeaders[index + 1]]] : [],
          );
          response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ method: request.method, headers, body: body.toString() }));
        };
      case "redirect":
        return (_request, _body, response) => response.writeHead(302, { location: "/hello" }).end("moved");
      case "missing":
        return (_request, _body, response) => response.writeHead(404, { "content-type": "text/plain" }).end("not here");
      case "stream":
        // Headers and a first part go out before the rest is written.
        return (_request, _body, response) => {
          response.writeHead(200, { "content-type": "text/plain" });
          response.write("part one, ");
          setImmediate(() => response.end("part two"));
        };
      case "empty":
        return (_request, _body, response) => response.writeHead(204).end();
      case "hold":
        return (_request, _body, response) => {
          response.writeHead(200, { "content-type": "text/plain" });
          response.write("held, ");
          this.held.set(key ?? "", response);
        };
      case "release":
        return (_request, _body, response) => {
          this.held.get(key ?? "")?.end("released");
          this.held.delete(key ?? "");
          response.writeHead(200).end("ok");
        };
      case "hang":
        // Never answers: for timeouts. stop() cuts it.
        return () => undefined;
      default:
        return (_request, _body, response) => response.writeHead(500).end(`no route ${url}`);
    }
  }
}
