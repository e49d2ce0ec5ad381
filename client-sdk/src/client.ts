/**
 * `connect(url)` -> a client bound to one daemon session. It starts processes
 * and routes each notification to the handle of its process.
 */
import type { EnvPolicy, ParamsOf, ProcessInfo, RequestMethod, ResultOf, StartParams } from "@execmux/shared";
import { decodeBase64 } from "./base64.js";
import { Emitter } from "./emitter.js";
import { DisconnectedError } from "./errors.js";
import { ProcessHandle } from "./process-handle.js";
import { RpcClient } from "./rpc-client.js";
import { openSocket, type SocketOptions } from "./socket.js";

export interface ConnectOptions extends SocketOptions {
  /** Sent in `initialize`; shows up in the daemon's logs. */
  clientName?: string;
  /** How long a request may wait for its reply (long-poll reads get their wait on top). */
  requestTimeoutMs?: number;
}

export interface StartOptions {
  argv: string[];
  /** Chosen by the client, unique within the session; generated when absent. */
  processId?: string;
  /** Absolute path or file:// URI on the daemon's machine. Default "/". */
  cwd?: string;
  /** Laid over the environment the policy builds. */
  env?: Record<string, string>;
  /** Default `{ inherit: "all" }` (the daemon's environment minus names like
   * *TOKEN*, *SECRET*, *KEY*). Pass `null` for upstream's "exactly `env`". */
  envPolicy?: EnvPolicy | null;
  tty?: boolean;
  /** Keep stdin open as a pipe (non-PTY processes only). */
  pipeStdin?: boolean;
  arg0?: string;
  cols?: number;
  rows?: number;
}

type ClientEvents = { disconnected: [string] };

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
let processCounter = 0;

export class ExecmuxClient {
  private readonly handles = new Map<string, ProcessHandle>();
  private readonly events = new Emitter<ClientEvents>();
  private rpc!: RpcClient;
  private session = "";

  private constructor(private readonly options: ConnectOptions) {}

  static async connect(url: string, options: ConnectOptions = {}): Promise<ExecmuxClient> {
    const client = new ExecmuxClient(options);
    const socket = await openSocket(url, options);
    client.rpc = new RpcClient(
      socket,
      (method, params) => client.onNotification(method, params),
      (reason) => client.events.emit("disconnected", reason),
    );
    const { sessionId } = await client.request("initialize", { clientName: options.clientName ?? "execmux-client" });
    client.session = sessionId;
    client.rpc.notify("initialized", {});
    return client;
  }

  get sessionId(): string {
    return this.session;
  }

  onDisconnected(listener: (reason: string) => void): () => void {
    return this.events.on("disconnected", listener);
  }

  request<M extends RequestMethod>(method: M, params: ParamsOf<M>, timeoutMs?: number): Promise<ResultOf<M>> {
    return this.rpc.request(method, params, timeoutMs ?? this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
  }

  async start(options: StartOptions): Promise<ProcessHandle> {
    const processId = options.processId ?? `p${++processCounter}-${Math.random().toString(36).slice(2, 8)}`;
    const params: StartParams = {
      processId,
      argv: options.argv,
      cwd: options.cwd ?? "/",
      env: options.env ?? {},
      tty: options.tty ?? false,
      pipeStdin: options.pipeStdin ?? false,
    };
    const envPolicy = options.envPolicy === undefined ? { inherit: "all" as const } : options.envPolicy;
    if (envPolicy) params.envPolicy = envPolicy;
    if (options.arg0 !== undefined) params.arg0 = options.arg0;
    if (options.cols !== undefined) params.cols = options.cols;
    if (options.rows !== undefined) params.rows = options.rows;

    // Registered before the request so no notification can find it missing.
    const handle = new ProcessHandle(processId, params.tty ?? false, this);
    this.handles.set(processId, handle);
    try {
      await this.request("process/start", params);
    } catch (error) {
      if (this.handles.get(processId) === handle) this.handles.delete(processId);
      throw error;
    }
    return handle;
  }

  /** Upstream's catch-up read; long-polls up to `waitMs`. */
  read(processId: string, options: { afterSeq?: number; maxBytes?: number; waitMs?: number } = {}): Promise<ResultOf<"process/read">> {
    const timeout = (this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) + (options.waitMs ?? 0);
    return this.request("process/read", { processId, ...options }, timeout);
  }

  async list(): Promise<ProcessInfo[]> {
    return (await this.request("process/list", {})).processes;
  }

  close(): void {
    this.rpc.close();
    for (const handle of this.handles.values()) handle.fail(new DisconnectedError("client closed"));
  }

  private onNotification(method: string, params: unknown): void {
    const { processId, seq } = params as { processId: string; seq: number };
    const handle = this.handles.get(processId);
    if (!handle) return;
    switch (method) {
      case "process/output": {
        const { stream, chunk } = params as ParamsOf<"process/read"> & { stream: "stdout" | "stderr" | "pty"; chunk: string };
        handle.deliverOutput(seq, stream, decodeBase64(chunk));
        break;
      }
      case "process/exited":
        handle.deliverExit(seq, (params as { exitCode: number }).exitCode);
        break;
      case "process/closed":
        handle.deliverClose(seq);
        this.handles.delete(processId);
        break;
    }
  }
}

export const connect = (url: string, options?: ConnectOptions) => ExecmuxClient.connect(url, options);
