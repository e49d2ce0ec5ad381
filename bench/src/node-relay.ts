/**
 * The least a Node relay can do, as a separate process, to show what part
 * of execmux's figures is Node and ws themselves. Prints its port.
 * - `/` (echo): one WebSocket, one `cat` on pipes, bytes passed both ways.
 * - `/pty?bytes=N`: `head -c N /dev/zero` on a PTY through node-pty's own
 *   API, each read sent as one binary message, the socket closed once the
 *   child has exited. node-pty drops the tail a child leaves in the kernel
 *   when it exits (pty-native.ts in the server says why), so the client
 *   sees a few hundred bytes less than N: what it got is what is counted.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

const require = createRequire(import.meta.url);
const pty = require("node-pty") as typeof import("node-pty");

/** How long the socket stays open after the child's exit, for node-pty's last reads to go out. */
const CLOSE_AFTER_EXIT_MS = 50;

function echo(socket: WebSocket): void {
  const cat = spawn("cat", [], { stdio: ["pipe", "pipe", "ignore"] });
  cat.stdout.on("data", (data: Buffer) => socket.send(data));
  socket.on("message", (data: Buffer) => cat.stdin.write(data));
  socket.on("close", () => cat.kill());
}

function ptyStream(socket: WebSocket, bytes: string): void {
  const terminal = pty.spawn("head", ["-c", bytes, "/dev/zero"], { encoding: null } as never);
  terminal.onData((data: string | Buffer) => socket.send(data));
  terminal.onExit(() => setTimeout(() => socket.close(), CLOSE_AFTER_EXIT_MS));
  socket.on("close", () => terminal.kill());
}

const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
server.on("listening", () => console.log((server.address() as AddressInfo).port));
server.on("connection", (socket, request) => {
  const url = new URL(request.url ?? "/", "ws://relay");
  const bytes = url.searchParams.get("bytes");
  if (url.pathname === "/pty" && bytes) ptyStream(socket, bytes);
  else echo(socket);
});
