/**
 * A daemon in stdio mode as a real child process, driven through its stdin
 * and stdout like a Codex client (or ssh) would: one JSON message per line.
 * Works for `execmux serve --listen stdio` and upstream's
 * `codex exec-server --listen stdio` alike.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { afterEach } from "vitest";
import { CLI } from "./cli.js";
import type { WireMessage } from "./wire-client.js";

const started = new Set<ChildProcess>();
afterEach(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  started.clear();
});

export class StdioPeer {
  /** Every line the daemon wrote to stdout, as written. */
  readonly lines: string[] = [];
  readonly messages: WireMessage[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: { match(message: WireMessage): boolean; resolve(message: WireMessage): void }[] = [];
  private stderrText = "";
  private nextId = 1;

  private constructor(readonly child: ChildProcess) {
    started.add(child);
    child.stderr!.on("data", (data: Buffer) => (this.stderrText += data.toString()));
    // EPIPE once the daemon stopped reading: the test looks at what it answered.
    child.stdin!.on("error", () => undefined);
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      this.lines.push(line);
      let message: WireMessage;
      try {
        message = JSON.parse(line) as WireMessage;
      } catch {
        return; // the test sees it in `lines`
      }
      this.messages.push(message);
      this.waiters = this.waiters.filter((waiter) => {
        if (!waiter.match(message)) return true;
        waiter.resolve(message);
        return false;
      });
    });
  }

  /** `execmux serve --listen stdio` with extra options. */
  static execmux(args: string[] = [], env: NodeJS.ProcessEnv = {}): StdioPeer {
    return StdioPeer.spawn(process.execPath, [CLI, "serve", "--listen", "stdio", ...args], env);
  }

  static spawn(command: string, args: string[], env: NodeJS.ProcessEnv = {}): StdioPeer {
    return new StdioPeer(spawn(command, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] }));
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Writes text to stdin as it is (a line needs its own newline). */
  write(text: string | Buffer): void {
    this.child.stdin!.write(text);
  }

  send(message: unknown): void {
    this.write(`${JSON.stringify(message)}\n`);
  }

  /** Ends stdin, as a parent that exits or an ssh connection that drops. */
  closeInput(): void {
    this.child.stdin!.end();
  }

  next(match: (message: WireMessage) => boolean): Promise<WireMessage> {
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Sends a request; resolves with its reply (result or error). */
  request(method: string, params?: unknown): Promise<WireMessage> {
    const id = this.nextId++;
    this.send({ id, method, ...(params === undefined ? {} : { params }) });
    return this.next((message) => message.id === id && message.method === undefined);
  }

  async call<T = Record<string, unknown>>(method: string, params?: unknown): Promise<T> {
    const reply = await this.request(method, params);
    if (reply.error) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
    return reply.result as T;
  }

  /** Upstream's handshake, as the Codex client sends it. */
  async ready(extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const result = await this.call("initialize", { clientName: "codex-environment", resumeSessionId: null, ...extra });
    this.send({ method: "initialized", params: {} });
    return result;
  }

  /** Every output byte of a process from its `process/output` notifications. */
  output(processId: string): string {
    return Buffer.concat(
      this.messages
        .filter((message) => message.method === "process/output" && message.params?.processId === processId)
        .map((message) => Buffer.from(String(message.params?.chunk), "base64")),
    ).toString("utf8");
  }
}
