/**
 * node-floor.ts as a WebSocket server of its own for section 9: the least a
 * Node server does for a connection (node:http, ws, `initialize` answered),
 * measured beside execmux and upstream as context, never as a target.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const NODE_FLOOR = fileURLToPath(new URL("./node-floor.js", import.meta.url));

export class NodeFloorServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(): Promise<NodeFloorServer> {
    const child = spawn(process.execPath, [NODE_FLOOR, "ws"], { stdio: ["ignore", "pipe", "inherit"] });
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once("line", (line) => resolve(line.trim()));
      child.once("exit", (code, signal) => reject(new Error(`node-floor.js ended before listening (${signal ?? code})`)));
    });
    return new NodeFloorServer(child, url);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, "exit");
    this.child.kill("SIGTERM");
    await exited;
  }
}
