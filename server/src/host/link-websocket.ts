/**
 * The host's WebSocket for one client: ws's own, over the client's socket
 * the front handed over, or over the link the front relays a TLS client's
 * bytes on. The front answered the handshake and read nothing past it that
 * it does not pass on, so what arrives here is the client's frame stream
 * from its first byte on, and this side parses, masks, pings and closes
 * exactly as an in-process daemon's server does.
 */
import type { Socket } from "node:net";
import { WebSocket, type ServerOptions } from "ws";

/** ws's server-side WebSocket, as its server builds one after a handshake (websocket-server.js, completeUpgrade). */
interface UpgradedWebSocket {
  setSocket(socket: Socket, head: Buffer, options: ServerOptions): void;
}

/** `head`: the client's bytes that came with the link's hello; `options`: a WebSocketServer's, for the same limits. */
export function webSocketOverLink(link: Socket, head: Buffer, options: ServerOptions): WebSocket {
  // The options go to the constructor too: they carry autoPong and the close timeout.
  const socket = new WebSocket(null as unknown as string, undefined, options as never);
  (socket as unknown as UpgradedWebSocket).setSocket(link, head, options);
  // The hello was read with the link paused; ws only listens for data.
  link.resume();
  return socket;
}
