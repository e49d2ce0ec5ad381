/**
 * A CONNECT tunnel through an http:// proxy to an https target, as reqwest
 * opens one; the caller runs TLS over the socket it resolves with.
 */
import { request } from "node:http";
import type { Socket } from "node:net";
import type { WireHeader } from "./outgoing-request.js";
import { bareHost } from "./proxy-route.js";

export function openTunnel(
  proxy: URL,
  target: { readonly host: string; readonly port: number },
  extraHeaders: readonly WireHeader[],
  signal: AbortSignal,
): Promise<Socket> {
  const authority = `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`;
  return new Promise((resolve, reject) => {
    const connect = request({
      host: bareHost(proxy.hostname),
      port: Number(proxy.port) || 80,
      method: "CONNECT",
      path: authority,
      headers: [["host", authority], ...extraHeaders].flat(),
      agent: false,
    });
    const onAbort = () => connect.destroy(new Error("http/request aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    connect.on("error", (error) => {
      signal.removeEventListener("abort", onAbort);
      reject(error);
    });
    connect.once("connect", (response, socket: Socket) => {
      signal.removeEventListener("abort", onAbort);
      if (response.statusCode === 200) {
        resolve(socket);
        return;
      }
      socket.destroy();
      reject(new Error(`the proxy answered CONNECT with ${response.statusCode ?? "no status"}`));
    });
    connect.end();
  });
}
