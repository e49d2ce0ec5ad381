/**
 * The least a Node relay can do: one WebSocket, one `cat` on pipes, bytes
 * passed both ways. The bench runs it as a separate process to show what
 * part of execmux's echo latency is Node and ws themselves. Prints its port.
 */
import { spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";

const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
server.on("listening", () => console.log((server.address() as AddressInfo).port));
server.on("connection", (socket) => {
  const cat = spawn("cat", [], { stdio: ["pipe", "pipe", "ignore"] });
  cat.stdout.on("data", (data: Buffer) => socket.send(data));
  socket.on("message", (data: Buffer) => cat.stdin.write(data));
  socket.on("close", () => cat.kill());
});
