/**
 * The real Codex app-server (`codex app-server`, the same binary as the
 * upstream exec-server), driven over its stdio JSON-RPC the way an IDE
 * drives it: for what `codex exec` cannot ask for, such as a thread with
 * `selectedCapabilityRoots` (the plugin roots an IDE picked), whose skills
 * the agent discovers on the executor (capabilityRoots/discoverV1).
 * CODEX_EXEC_SERVER_URL makes the executor the one under test.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { afterEach } from "vitest";
import { prepareAgentHome, type AgentHomeOptions } from "./codex-agent.js";
import { upstreamCodex } from "./upstream.js";

interface Reply {
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string };
}

export interface AppServerNotification {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

const running = new Set<CodexAppServer>();
afterEach(() => {
  for (const server of running) server.close();
  running.clear();
});

export class CodexAppServer {
  readonly notifications: AppServerNotification[] = [];
  /** Everything it wrote to stderr: its log, for a failure's message. */
  stderr = "";
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private readonly waiters: { match: (notification: AppServerNotification) => boolean; resolve: (notification: AppServerNotification) => void }[] = [];

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on("line", (line) => this.receive(line));
    child.stderr!.on("data", (data: Buffer) => (this.stderr += data.toString()));
  }

  /** Starts it with a scratch HOME configured as `options` say, and opens the experimental API (thread/start's selectedCapabilityRoots). */
  static async start(options: AgentHomeOptions): Promise<CodexAppServer> {
    const child = spawn(upstreamCodex(), ["app-server"], { env: prepareAgentHome(options), stdio: ["pipe", "pipe", "pipe"] });
    const server = new CodexAppServer(child);
    running.add(server);
    const initialized = await server.request("initialize", { clientInfo: { name: "execmux-tests", version: "1" }, capabilities: { experimentalApi: true } });
    if (initialized.error) throw new Error(`app-server initialize failed: ${initialized.error.message}`);
    server.send({ method: "initialized" });
    return server;
  }

  request(method: string, params: unknown): Promise<Reply> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.send({ id, method, params });
    });
  }

  /** The first notification of `method` (already received or still to come) whose params pass `match`. */
  notification(method: string, match: (params: Record<string, unknown>) => boolean = () => true): Promise<AppServerNotification> {
    const matches = (notification: AppServerNotification) => notification.method === method && match(notification.params);
    const seen = this.notifications.find(matches);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match: matches, resolve }));
  }

  close(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }

  private send(message: Record<string, unknown>): void {
    this.child.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  private receive(line: string): void {
    let message: { id?: number; method?: string; params?: Record<string, unknown> } & Reply;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.method === undefined && typeof message.id === "number") {
      this.pending.get(message.id)?.(message);
      this.pending.delete(message.id);
      return;
    }
    if (message.method === undefined || message.id !== undefined) return;
    const notification = { method: message.method, params: message.params ?? {} };
    this.notifications.push(notification);
    for (const waiter of this.waiters.filter((candidate) => candidate.match(notification))) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(notification);
    }
  }
}
