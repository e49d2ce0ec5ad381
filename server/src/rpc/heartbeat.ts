/**
 * Pings a peer every interval and drops it when a ping goes unanswered for
 * the timeout. Without this a half-open TCP connection (the client's network
 * vanished) would hold its session until the kernel gives up, and the client
 * could not resume in the meantime.
 */
import type { Liveness } from "./transport.js";

export function startHeartbeat(peer: Liveness, intervalMs: number, timeoutMs: number, onDead: () => void): () => void {
  let deadline: NodeJS.Timeout | undefined;
  const alive = () => {
    if (deadline) clearTimeout(deadline);
    deadline = undefined;
  };
  const interval = setInterval(() => {
    if (deadline) return; // still waiting for the previous answer
    deadline = setTimeout(() => {
      onDead();
      peer.terminate();
    }, timeoutMs);
    peer.ping();
  }, intervalMs);
  // A pong or any message proves the peer is there.
  peer.onSignOfLife(alive);
  return () => {
    clearInterval(interval);
    alive();
  };
}
