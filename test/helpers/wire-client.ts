/**
 * A raw protocol client for conformance tests: it sends exactly the JSON it
 * is given and records every frame, like an upstream client would see them.
 */
import { afterEach } from "vitest";
import WebSocket from "ws";

export interface WireMessage {
  jsonrpc?: string;
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

const open = new Set<WireClient>();
afterEach(() => {
  for (const client of open) client.close();
  open.clear();
});

export class WireClient {
  readonly messages: WireMessage[] = [];
  private waiters: { match(message: WireMessage): boolean; resolve(message: WireMessage): void }[] = [];
  private nextId = 1;
  closed: Promise<number>;

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data, isBinary) => {
      if (isBinary) {
        this.binaryFrames.push(data as Buffer);
        this.waiters = this.waiters.filter((waiter) => {
          if (!waiter.match({ method: "binary" })) return true;
          waiter.resolve({ method: "binary" });
          return false;
        });
        return;
      }
      const message = JSON.parse(data.toString()) as WireMessage;
      this.messages.push(message);
      this.waiters = this.waiters.filter((waiter) => {
        if (!waiter.match(message)) return true;
        waiter.resolve(message);
        return false;
      });
    });
    this.closed = new Promise((resolve) => socket.on("close", (code) => resolve(code)));
  }

  /** Opens a socket; `token` goes in an Authorization header; `options` are ws's (a `localAddress`, say). */
  static async connect(url: string, token?: string, options: WebSocket.ClientOptions = {}): Promise<WireClient> {
    const socket = new WebSocket(url, { ...options, ...(token ? { headers: { ...options.headers, authorization: `Bearer ${token}` } } : {}) });
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    const client = new WireClient(socket);
    open.add(client);
    return client;
  }

  /** Connects and completes upstream's handshake. */
  static async ready(url: string, token?: string, options: WebSocket.ClientOptions = {}): Promise<WireClient> {
    const client = await WireClient.connect(url, token, options);
    await client.request("initialize", { clientName: "conformance" });
    client.send({ method: "initialized", params: {} });
    return client;
  }

  send(message: unknown): void {
    this.socket.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.socket.send(data, { binary });
  }

  /** Resolves with the first message (already received or future) that matches. */
  next(match: (message: WireMessage) => boolean): Promise<WireMessage> {
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Sends a request and resolves with its reply (result or error). */
  request(method: string, params?: unknown, extra: Record<string, unknown> = {}): Promise<WireMessage> {
    const id = this.nextId++;
    this.send({ id, method, ...(params === undefined ? {} : { params }), ...extra });
    return this.next((message) => message.id === id && message.method === undefined);
  }

  /** The result of a request that must succeed. */
  async call<T = Record<string, unknown>>(method: string, params?: unknown): Promise<T> {
    const reply = await this.request(method, params);
    if (reply.error) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
    return reply.result as T;
  }

  notifications(processId: string): WireMessage[] {
    return this.messages.filter((message) => message.method?.startsWith("process/") && message.params?.processId === processId);
  }

  /** Resolves once `process/closed` arrived for the process. */
  closedOf(processId: string): Promise<WireMessage> {
    return this.next((message) => message.method === "process/closed" && message.params?.processId === processId);
  }

  /** Every output byte of a process, by stream, from the notifications received. */
  output(processId: string, stream?: string): string {
    return Buffer.concat(
      this.notifications(processId)
        .filter((message) => message.method === "process/output" && (!stream || message.params?.stream === stream))
        .map((message) => Buffer.from(String(message.params?.chunk), "base64")),
    ).toString("utf8");
  }

  /** Binary frames received (the binaryOutput extension), raw. */
  readonly binaryFrames: Buffer[] = [];

  /** Stops reading from the TCP socket, like a stalled client: the daemon's sends back up. */
  pauseReading(): void {
    (this.socket as unknown as { _socket: { pause(): void } })._socket.pause();
  }

  resumeReading(): void {
    (this.socket as unknown as { _socket: { resume(): void } })._socket.resume();
  }

  /**
   * Reads like a slow client: after each network read, stops reading for
   * `pauseMs`. `onRead` runs on each read. Returns what ends the throttling.
   */
  throttleReading(pauseMs: number, onRead: () => void = () => undefined): () => void {
    const tcp = (this.socket as unknown as { _socket: NodeJS.ReadableStream & { pause(): void; resume(): void } })._socket;
    let timer: NodeJS.Timeout | undefined;
    const onData = () => {
      onRead();
      tcp.pause();
      timer = setTimeout(() => tcp.resume(), pauseMs);
    };
    tcp.on("data", onData);
    return () => {
      clearTimeout(timer);
      tcp.off("data", onData);
      tcp.resume();
    };
  }

  close(): void {
    this.socket.close();
  }

  /** Drops the TCP connection without a closing handshake, as a client that dies or walks away does. */
  terminate(): void {
    this.socket.terminate();
  }
}

export const b64 = (text: string) => Buffer.from(text).toString("base64");
export const unb64 = (text: unknown) => Buffer.from(String(text), "base64").toString("utf8");
