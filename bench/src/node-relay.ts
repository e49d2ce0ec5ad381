/**
 * The least a Node relay can do, as a separate process, to show what part
 * of execmux's figures is Node and ws themselves. Prints its port.
 * - `/` (echo): one WebSocket, one `cat` on pipes, bytes passed both ways.
 * - `/pty?bytes=N`: `head -c N /dev/zero` on a PTY through node-pty's own
 *   API, each read sent as one binary message, the socket closed once the
 *   child has exited (node-pty reports the exit once its reads have ended).
 *   Beside section 2's bare node-pty loop it adds what any daemon adds, a
 *   socket and a client process, and nothing else. node-pty drops the tail
 *   a child leaves in the kernel when it exits (pty-native.ts in the
 *   server says why), so the client sees a little less than N.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

const require = createRequire(import.meta.url);
const pty = require("node-pty") as typeof import("node-pty");

function echo(socket: WebSocket): void {
  const cat = spawn("cat", [], { stdio: ["pipe", "pipe", "ignore"] });
  cat.stdout.on("data", (data: Buffer) => socket.send(data));
  socket.on("message", (data: Buffer) => cat.stdin.write(data));
  socket.on("close", () => cat.kill());
}

function ptyStream(socket: WebSocket, bytes: number): void {
  const terminal = pty.spawn("head", ["-c", String(bytes), "/dev/zero"], { encoding: null });
  let exited = false;
  terminal.onData((data: string | Buffer) => socket.send(data));
  terminal.onExit(() => {
    exited = true;
    socket.close(1000);
  });
  // A client gone before the end ends the child; once it has exited, its pid may be someone else's.
  socket.on("close", () => exited || terminal.kill());
}

// Its stdin is the bench's pipe: a bench that is gone, however it ended, ends the relay too.
process.stdin.on("close", () => process.exit(0)).resume();

const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
server.on("listening", () => console.log((server.address() as AddressInfo).port));
server.on("connection", (socket, request) => {
  const url = new URL(request.url ?? "/", "ws://relay");
  const bytes = Number(url.searchParams.get("bytes"));
  if (url.pathname === "/") echo(socket);
  else if (url.pathname === "/pty" && Number.isSafeInteger(bytes) && bytes > 0) ptyStream(socket, bytes);
  else socket.close(1008, "unknown request");
});
