/** Raw WebSocket handshakes, to see the HTTP status a refused upgrade gets. */
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
