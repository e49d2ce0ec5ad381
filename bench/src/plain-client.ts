/**
 * A plain upstream-dialect client: what a program written against Codex's
 * `codex exec-server` protocol does, and nothing execmux adds (no binary
 * output frames, no acks, no resume). JSON text frames over `ws`, one
 * listener per process, integer request ids from 1 as Codex's RpcClient
 * numbers them. The same code drives execmux and the upstream server, so
 * their figures differ only by the server.
 */
import WebSocket from "ws";

/** The `process/start` fields Codex's client always sends (ExecParams serialized), for a plain process. */
export interface PlainStart {
  argv: string[];
  cwd: string;
  env?: Record<string, string>;
  tty?: boolean;
  pipeStdin?: boolean;
}

/** What a process's notifications say, in the order they come (Codex reorders by seq; over one socket they arrive in order). */
export interface ProcessEvents {
  onOutput?(bytes: number, chunkBase64: string): void;
  onClosed?(): void;
}

interface Pending {
  resolve(result: any): void;
  reject(error: Error): void;
}

export class PlainClient {
  private nextId = 1;
  private nextProcess = 0;
  private nextWrite = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly processes = new Map<string, ProcessEvents>();
  /** From `initialize`: the server's working directory (a file URI), where Codex's benchmark points fs/getMetadata. */
  cwd = "file:///";

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data, isBinary) => this.receive(data as Buffer, isBinary));
    socket.on("close", () => {
      for (const call of this.pending.values()) call.reject(new Error("socket closed"));
      this.pending.clear();
    });
  }

  /** Connects and does the handshake: `initialize`, its reply, then `initialized`. */
  static async connect(url: string, clientName = "execmux-bench-plain"): Promise<PlainClient> {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    const client = new PlainClient(socket);
    const result = await client.call("initialize", { clientName, resumeSessionId: null });
    const cwd = result?.environmentInfo?.cwd;
    if (typeof cwd === "string") client.cwd = cwd;
    client.socket.send(JSON.stringify({ method: "initialized", params: {} }));
    return client;
  }

  call(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Starts a process with the fields Codex's client sends; `events` sees its notifications from the first one. */
  async start(options: PlainStart, events: ProcessEvents = {}): Promise<string> {
    const processId = `plain-${this.nextProcess++}`;
    this.processes.set(processId, events);
    await this.call("process/start", {
      processId,
      argv: options.argv,
      cwd: options.cwd,
      envPolicy: null,
      env: options.env ?? { PATH: "/usr/local/bin:/usr/bin:/bin" },
      tty: options.tty ?? false,
      pipeStdin: options.pipeStdin ?? false,
      arg0: null,
      sandbox: null,
      enforceManagedNetwork: false,
      managedNetwork: null,
    });
    return processId;
  }

  /** Starts a process and resolves when it is closed (exit code known, output streams ended). */
  async run(options: PlainStart, onOutput?: (bytes: number) => void): Promise<void> {
    let closed!: () => void;
    const done = new Promise<void>((resolve) => (closed = resolve));
    const processId = await this.start(options, { onClosed: () => closed(), ...(onOutput ? { onOutput } : {}) });
    await done;
    this.processes.delete(processId);
  }

  /** `process/write` with a fresh writeId, as Codex's client sends it. */
  write(processId: string, text: string): Promise<unknown> {
    return this.call("process/write", { processId, chunk: Buffer.from(text).toString("base64"), writeId: `w${this.nextWrite++}` });
  }

  /** Stops listening to a process (after its close: nothing more comes). */
  forget(processId: string): void {
    this.processes.delete(processId);
  }

  async terminate(processId: string): Promise<void> {
    await this.call("process/terminate", { processId });
    this.processes.delete(processId);
  }

  close(): void {
    this.socket.close();
  }

  private receive(data: Buffer, isBinary: boolean): void {
    if (isBinary) throw new Error("the plain client asked for no binary frames, yet got one");
    const message = JSON.parse(data.toString()) as { id?: number; method?: string; params?: any; result?: unknown; error?: { message: string } };
    if (message.method === undefined) {
      const call = this.pending.get(message.id!);
      if (!call) return;
      this.pending.delete(message.id!);
      if (message.error) call.reject(new Error(message.error.message));
      else call.resolve(message.result);
      return;
    }
    const events = this.processes.get(message.params?.processId);
    if (!events) return;
    if (message.method === "process/output") {
      const chunk = message.params.chunk as string;
      // Decoded length without decoding: what the bytes cost is the server's, not ours.
      const padding = chunk.endsWith("==") ? 2 : chunk.endsWith("=") ? 1 : 0;
      events.onOutput?.((chunk.length / 4) * 3 - padding, chunk);
    } else if (message.method === "process/closed") {
      events.onClosed?.();
    }
  }
}
