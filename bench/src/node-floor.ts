/**
 * The least a Node daemon can do for resting-cost.ts's cold start: listen
 * (node:http and ws, or stdin lines), answer `initialize`, run the first
 * process with child_process and say `process/closed` when it exits. No
 * sessions, no validation, no process host: what Node itself costs on this
 * machine, measured beside execmux and upstream as context.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { createInterface } from "node:readline";
import { WebSocketServer } from "ws";

type Send = (message: unknown) => void;

function answer(text: string, send: Send): void {
  const message = JSON.parse(text) as { id?: number; method?: string; params?: { processId?: string; argv?: string[] } };
  if (message.method === "initialize") send({ id: message.id, result: { sessionId: "floor" } });
  if (message.method === "process/start") {
    const [file, ...args] = message.params?.argv ?? ["/bin/true"];
    spawn(file!, args, { stdio: "ignore" }).once("exit", () => send({ method: "process/closed", params: { processId: message.params?.processId } }));
    send({ id: message.id, result: { processId: message.params?.processId } });
  }
}

if (process.argv[2] === "stdio") {
  createInterface({ input: process.stdin }).on("line", (line) => answer(line, (message) => process.stdout.write(`${JSON.stringify(message)}\n`)));
  process.stdin.once("end", () => process.exit(0));
} else {
  const server = createServer();
  new WebSocketServer({ server }).on("connection", (socket) => socket.on("message", (data) => answer(data.toString(), (message) => socket.send(JSON.stringify(message)))));
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.stdout.write(`ws://127.0.0.1:${typeof address === "object" && address ? address.port : 0}\n`);
  });
}
