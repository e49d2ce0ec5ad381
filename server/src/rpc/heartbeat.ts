/**
 * Pings a socket every interval and terminates it when a ping goes
 * unanswered for the timeout. Without this a half-open TCP connection (the
 * client's network vanished) would hold its session until the kernel gives
 * up, and the client could not resume in the meantime.
 */
import type { WebSocket } from "ws";

export function startHeartbeat(socket: WebSocket, intervalMs: number, timeoutMs: number, onDead: () => void): () => void {
  let deadline: NodeJS.Timeout | undefined;
  const alive = () => {
    if (deadline) clearTimeout(deadline);
    deadline = undefined;
  };
  const interval = setInterval(() => {
    if (deadline) return; // still waiting for the previous answer
    deadline = setTimeout(() => {
      onDead();
      socket.terminate();
    }, timeoutMs);
    socket.ping();
  }, intervalMs);
  socket.on("pong", alive);
  // Any frame proves the peer is there.
  socket.on("message", alive);
  return () => {
    clearInterval(interval);
    alive();
  };
}
