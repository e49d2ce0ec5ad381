/**
 * A WebSocket tap: a loopback proxy between a client (the Codex agent) and an
 * exec-server that records every message both ways, so a test, or a developer
 * reading a failure, sees exactly what the client asked and what it was told.
 * It relays messages, not bytes, so each recorded frame is one JSON-RPC message.
 */
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import WebSocket, { WebSocketServer, type RawData } from "ws";

export type Direction = "client" | "server";

export interface TappedFrame {
  /** Which side sent it. */
  readonly from: Direction;
  /** Counts the client's connections from 1: a reconnect starts a new one. */
  readonly connection: number;
  readonly text: string;
  /** The parsed message, or undefined when the text is not JSON. */
  readonly message: JsonRpcMessage | undefined;
}

export interface JsonRpcMessage {
  readonly id?: number | string;
  readonly method?: string;
  readonly params?: unknown;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
}

/** A request the client sent, with what the server answered (undefined while unanswered). */
export interface TappedExchange {
  readonly connection: number;
  readonly request: JsonRpcMessage & { readonly method: string };
  readonly reply: JsonRpcMessage | undefined;
}

const taps = new Set<WsTap>();
afterEach(async () => {
  await Promise.all([...taps].map((tap) => tap.close()));
  taps.clear();
});

export class WsTap {
  readonly frames: TappedFrame[] = [];
  private connections = 0;
  private readonly sockets = new Set<WebSocket>();

  private constructor(
    private readonly server: WebSocketServer,
    private readonly targetUrl: string,
  ) {}

  /** Listens on 127.0.0.1, port 0, and relays every connection to `targetUrl`. */
  static async start(targetUrl: string): Promise<WsTap> {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
    const tap = new WsTap(server, targetUrl);
    server.on("connection", (client, request) => tap.relay(client, request));
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    taps.add(tap);
    return tap;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Every request the client sent, paired with the server's reply, in the order sent. */
  exchanges(): TappedExchange[] {
    const exchanges: TappedExchange[] = [];
    for (const frame of this.frames) {
      const message = frame.message;
      if (frame.from !== "client" || message?.method === undefined || message.id === undefined) continue;
      const reply = this.frames.find(
        (candidate) =>
          candidate.from === "server" &&
          candidate.connection === frame.connection &&
          candidate.message?.method === undefined &&
          candidate.message?.id === message.id,
      )?.message;
      exchanges.push({ connection: frame.connection, request: message as TappedExchange["request"], reply });
    }
    return exchanges;
  }

  /** The params of every request for `method` the client sent. */
  requestsFor(method: string): unknown[] {
    return this.exchanges()
      .filter((exchange) => exchange.request.method === method)
      .map((exchange) => exchange.request.params);
  }

  /** Notifications the server sent for `method` (process/output, process/exited...). */
  notifications(method: string): unknown[] {
    return this.frames
      .filter((frame) => frame.from === "server" && frame.message?.method === method && frame.message.id === undefined)
      .map((frame) => frame.message?.params);
  }

  /** Requests the server refused or never answered: what a server would need to add to serve this client. */
  unserved(): TappedExchange[] {
    return this.exchanges().filter((exchange) => exchange.reply === undefined || exchange.reply.error !== undefined);
  }

  /** The whole conversation, one line a frame, for a failure message or a developer. */
  transcript(): string {
    return this.frames.map((frame) => `#${frame.connection} ${frame.from === "client" ? ">>" : "<<"} ${frame.text}`).join("\n");
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: WebSocket, request: IncomingMessage): void {
    const connection = ++this.connections;
    const headers: Record<string, string> = {};
    if (request.headers.authorization) headers.authorization = request.headers.authorization;
    const server = new WebSocket(this.targetUrl, { headers, perMessageDeflate: false });
    this.sockets.add(client).add(server);
    // The client may speak before the onward connection is open; hold its messages until then.
    const early: { data: RawData; isBinary: boolean }[] = [];
    server.once("open", () => {
      for (const { data, isBinary } of early.splice(0)) server.send(data, { binary: isBinary });
    });
    client.on("message", (data, isBinary) => {
      this.record("client", connection, data);
      if (server.readyState === WebSocket.OPEN) server.send(data, { binary: isBinary });
      else early.push({ data, isBinary });
    });
    server.on("message", (data, isBinary) => {
      this.record("server", connection, data);
      client.send(data, { binary: isBinary });
    });
    const closeBoth = (code: number) => {
      const forwardable = code >= 3000 || (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014);
      for (const socket of [client, server]) {
        if (socket.readyState === WebSocket.OPEN) socket.close(forwardable ? code : 1000);
        else if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
      }
    };
    client.on("close", closeBoth);
    server.on("close", closeBoth);
    client.on("error", () => closeBoth(1011));
    server.on("error", () => closeBoth(1011));
  }

  private record(from: Direction, connection: number, data: RawData): void {
    const text = Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString("utf8");
    let message: JsonRpcMessage | undefined;
    try {
      message = JSON.parse(text) as JsonRpcMessage;
    } catch {
      message = undefined;
    }
    this.frames.push({ from, connection, text, message });
  }
}
