/** Raw WebSocket handshakes, to see the HTTP status a refused upgrade gets. */
import { randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import WebSocket from "ws";

export interface HandshakeResult {
  status: number;
  protocol?: string;
}

/** Opens a WebSocket with the given options; resolves with 101 (and the chosen subprotocol) or the refusal's status. */
export function handshake(url: string, options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<HandshakeResult> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {}, rejectUnauthorized: false });
    socket.once("open", () => {
      resolve({ status: 101, protocol: socket.protocol });
      socket.close();
    });
    socket.once("unexpected-response", (_request, response) => {
      resolve({ status: response.statusCode ?? 0 });
      socket.terminate();
    });
    socket.once("error", reject);
  });
}

export const httpUrl = (wsUrl: string) => wsUrl.replace(/^ws/, "http");

export interface UpgradeAnswer {
  status: number;
  /** The refusal's body (empty for 101). */
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One WebSocket upgrade request with exactly these headers; what the server answered, body included. */
export function upgradeAttempt(url: string, headers: Record<string, string> = {}, path = "/"): Promise<UpgradeAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${httpUrl(url)}${path}`, {
      // A connection of its own, as a WebSocket client opens: after refusing an upgrade the server may close it.
      agent: false,
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": randomBytes(16).toString("base64"),
        ...headers,
      },
    });
    request.once("upgrade", (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 0, body: "", headers: response.headers });
    });
    request.once("response", (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.once("end", () => resolve({ status: response.statusCode ?? 0, body, headers: response.headers }));
    });
    request.once("error", reject);
    request.end();
  });
}

/** Sum of a metric's samples on the daemon's /metrics whose labels contain `labels` (0 when absent). */
export async function metric(url: string, name: string, labels = ""): Promise<number> {
  const text = await (await fetch(`${httpUrl(url)}/metrics`)).text();
  let total = 0;
  for (const match of text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, "gm"))) {
    if ((match[1] ?? "").includes(labels)) total += Number(match[2]);
  }
  return total;
}
