/**
 * A loopback HTTP server for http/request tests: it records every request
 * (line, raw headers, body) and hands each one to the test, which answers
 * it when and how it likes. Closed after the test.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { afterEach } from "vitest";

export interface CapturedRequest {
  readonly method: string;
  /** The request target as sent: a path, or an absolute URL when it came through as a proxy request. */
  readonly target: string;
  /** Name, value, name, value... exactly as received. */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
  readonly response: ServerResponse;
  /** Resolves when the connection closes before the response was finished: the daemon gave up on it. */
  readonly abandoned: Promise<void>;
}

export interface CapturedConnect {
  readonly authority: string;
  readonly rawHeaders: readonly string[];
  readonly socket: Socket;
}

const open = new Set<HttpTarget>();
afterEach(async () => {
  await Promise.all([...open].map((target) => target.close()));
  open.clear();
});

export class HttpTarget {
  readonly requests: CapturedRequest[] = [];
  readonly connects: CapturedConnect[] = [];
  private waiters: ((request: CapturedRequest) => void)[] = [];
  private taken = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Starts on 127.0.0.1, port 0. `respond`, when given, answers every request at once. */
  static async start(respond?: (request: CapturedRequest) => void): Promise<HttpTarget> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const target = new HttpTarget(server, (server.address() as { port: number }).port);
    server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const abandoned = new Promise<void>((resolve) =>
          response.on("close", () => {
            if (!response.writableFinished) resolve();
          }),
        );
        const captured: CapturedRequest = {
          method: request.method ?? "",
          target: request.url ?? "",
          rawHeaders: request.rawHeaders,
          body: Buffer.concat(chunks),
          response,
          abandoned,
        };
        target.requests.push(captured);
        if (respond) respond(captured);
        else target.waiters.shift()?.(captured);
      });
    });
    // As a proxy would see an https request: refused, and recorded.
    server.on("connect", (request: IncomingMessage, socket: Socket) => {
      target.connects.push({ authority: request.url ?? "", rawHeaders: request.rawHeaders, socket });
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    });
    open.add(target);
    return target;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The next request not yet handed out (already received, or the next to arrive). */
  next(): Promise<CapturedRequest> {
    const index = this.taken++;
    const received = this.requests[index];
    if (received) return Promise.resolve(received);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    open.delete(this);
    this.server.closeAllConnections();
    for (const { socket } of this.connects) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A raw header's value by (case-insensitive) name, every occurrence in order. */
export function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    if (rawHeaders[index]!.toLowerCase() === name) values.push(rawHeaders[index + 1]!);
  }
  return values;
}
