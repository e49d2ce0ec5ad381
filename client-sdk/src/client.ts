/**
 * `connect(url)` -> a client bound to one daemon session. It starts
 * processes, routes each notification to the handle of its process, and, when
 * the socket drops, reconnects on its own: it resumes the session with every
 * handle's last seen seq, so each process's output reaches the application
 * exactly once and in order across any number of reconnects.
 */
import {
  codexSandbox,
  CloseCode,
  ErrorCode,
  type FileSystemSandboxContext,
  type SandboxMode,
  type EnvPolicy,
  type GapNotification,
  type OutputStream,
  type ParamsOf,
  type ProcessInfo,
  type ProcessStartedNotification,
  type RequestMethod,
  type ResultOf,
  type SessionSummary,
  type StartParams,
} from "@execmux/shared";
import { decodeBase64 } from "./base64.js";
import { AckBatcher } from "./ack-batcher.js";
import { backoffDelay, resolveReconnectOptions, type ReconnectOptions, type ResolvedReconnectOptions } from "./backoff.js";
import { Emitter } from "./emitter.js";
import { DisconnectedError, ExecmuxError, RpcRequestError, SessionLostError } from "./errors.js";
import { ProcessHandle, type ProcessHandleOwner } from "./process-handle.js";
import { RpcClient, type FrameLimit } from "./rpc-client.js";
import { collectSessions } from "./session-list.js";
import { openSocket, type SocketOptions } from "./socket.js";

export interface ConnectOptions extends SocketOptions {
  /** Sent in `initialize`; shows up in the daemon's logs. */
  clientName?: string;
  /** How long a request may wait for its reply (long-poll reads get their wait on top). */
  requestTimeoutMs?: number;
  /** Automatic reconnect and resume; `false` turns it off. */
  reconnect?: ReconnectOptions | false;
  /**
   * Attach to an existing session instead of creating one, following
   * `processes` from their first retained output. A session still held by
   * another connection is taken from it (`takeover`, the default: typically
   * your own dead connection); with `takeover: false` connecting fails with
   * the daemon's -32010 instead, naming the client that holds it.
   */
  resume?: { sessionId: string; processes?: string[]; takeover?: boolean };
  /**
   * Follow a session read-only instead of creating or resuming one (see
   * `observe()`): your identity's own session, or any with an observer
   * token. Every process is announced with the `process` event and followed
   * from its first retained output; writes, signals and starts fail with
   * -32013.
   */
  observe?: { sessionId: string };
  /**
   * How long the session waits for a resume once no connection holds it,
   * before its processes are terminated (the daemon caps it at its
   * --max-session-ttl-ms). Default: the daemon's --session-ttl-ms.
   */
  detachedTtlMs?: number;
  /**
   * While no connection holds the session, it does not expire as long as
   * any of its processes runs (what `execmux exec --detach` asks); the TTL
   * counts from the last one's exit.
   */
  keepWhileRunning?: boolean;
  /** Receive output as binary frames instead of base64 in JSON. Default true. */
  binaryOutput?: boolean;
  /**
   * Credit flow control: the daemon pauses a process once this many of its
   * output bytes were sent but not yet delivered to the application (and,
   * while several processes send output, once the daemon's smaller shared
   * window is reached, which keeps a flood from queueing megabytes ahead of
   * another process's echo). Default 16 MiB; `false` turns it off.
   */
  ackWindowBytes?: number | false;
  /**
   * Acknowledge output only when the application says it has consumed it
   * (`ProcessHandle.ack`), not as soon as it is delivered: for a client that
   * renders asynchronously, like a terminal widget, so a flood is paced by
   * rendering instead of piling up in the page.
   */
  manualAcks?: boolean;
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
  /**
   * Confine the process as Codex does: "read-only", "workspace-write" (the
   * cwd, which must be given, is the project it may write), or a full
   * sandbox context. The daemon
   * refuses (-32602) what it cannot enforce rather than run it weaker.
   */
  sandbox?: SandboxMode | FileSystemSandboxContext;
}

export type GapEvent = GapNotification;

type ClientEvents = {
  /** The socket dropped; `reason` says how. A reconnect follows unless disabled. */
  disconnected: [reason: string];
  /** Attempt `attempt` starts after `delayMs`. */
  reconnecting: [{ attempt: number; delayMs: number }];
  /** The session is back; missed output is being replayed. */
  resumed: [{ sessionId: string; attempts: number }];
  /** Output of a process was evicted while disconnected: exactly what is gone. */
  gap: [GapEvent];
  /** The session is gone for good; every handle has failed with this error. */
  sessionLost: [SessionLostError];
  /** Observers only: a process of the observed session, announced once, before its output. */
  process: [ProcessHandle];
};

/**
 * Requests that are safe to send again after a reconnect: reads and lists
 * change nothing, a resize sets an absolute size, and writes carry a writeId
 * the daemon deduplicates. Everything else (start, signal, terminate,
 * closeStdin) fails with DisconnectedError rather than risk doing it twice.
 */
const RESENDABLE = new Set<RequestMethod>(["process/read", "process/list", "process/write", "process/resize", "session/list"]);

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_ACK_WINDOW_BYTES = 16 * 1024 * 1024;
let processCounter = 0;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const randomId = () => Math.random().toString(36).slice(2, 10);

export class ExecmuxClient implements ProcessHandleOwner {
  private readonly handles = new Map<string, ProcessHandle>();
  private readonly adopted = new Map<string, ProcessHandle>();
  private readonly events = new Emitter<ClientEvents>();
  private readonly reconnectOptions: ResolvedReconnectOptions;
  private rpc: RpcClient | undefined;
  private session = "";
  /** Undefined while acks are off. */
  private acks: AckBatcher | undefined;
  /** Set once the client is closed or the session lost: every request fails with it. */
  private finalError: ExecmuxError | undefined;
  /** The one reconnect loop, shared by every caller waiting for a connection. */
  private reconnecting: Promise<void> | undefined;
  /** Learnt from a 1009 close; kept across reconnects. */
  private readonly frameLimit: FrameLimit = { refusedBytes: Infinity };
  /**
   * Observers only: the last seq of processes followed to their close, so a
   * reconnect does not announce them again; the oldest are dropped past a
   * bound (the daemon forgets closed processes too).
   */
  private readonly followedToClose = new Map<string, number>();
  private lifetime: { detachedTtlMs?: number; keepWhileRunning?: boolean } = {};
  /** Observers: processes announced before the first `onProcess` listener (bounded), handed to it. */
  private unclaimed: ProcessHandle[] | undefined = [];

  private constructor(
    private readonly url: string,
    private readonly options: ConnectOptions,
  ) {
    this.reconnectOptions = resolveReconnectOptions(options.reconnect);
  }

  static async connect(url: string, options: ConnectOptions = {}): Promise<ExecmuxClient> {
    if (options.resume && options.observe) throw new ExecmuxError("resume and observe exclude each other: a client either holds a session or observes one");
    const client = new ExecmuxClient(url, options);
    if (options.resume) {
      client.session = options.resume.sessionId;
      for (const processId of options.resume.processes ?? []) client.adopt(processId);
    }
    if (options.observe) client.session = options.observe.sessionId;
    await client.open(options.resume !== undefined, options.resume?.takeover ?? true);
    return client;
  }

  /** True for a client that observes a session read-only (`observe()`). */
  get observing(): boolean {
    return this.options.observe !== undefined;
  }

  /** Observers: the handles of every process announced so far and not yet closed. */
  processes(): ProcessHandle[] {
    return [...this.handles.values()];
  }

  /**
   * Observers: `listener` gets every process's handle, those announced
   * already (at once: the open ones, and for the first listener also those
   * that closed before it came) and each one announced later, so none is
   * missed however soon after `observe()` the daemon announced it. A handle
   * keeps its output until something listens to it.
   */
  onProcess(listener: (handle: ProcessHandle) => void): () => void {
    // A quick process may have been announced, and even closed (leaving
    // `handles`), before the application could listen: those wait in `unclaimed`.
    const earlier = new Set([...(this.unclaimed ?? []), ...this.handles.values()]);
    this.unclaimed = undefined;
    for (const handle of earlier) listener(handle);
    return this.on("process", listener);
  }

  /**
   * The session's lifetime as the daemon applies it, when this client asked
   * for one (`detachedTtlMs`, `keepWhileRunning`) or observes.
   */
  get sessionLifetime(): { detachedTtlMs?: number; keepWhileRunning?: boolean } {
    return this.lifetime;
  }

  /**
   * The sessions this client's identity may see (its own; every one with an
   * observer token), with their processes, every page of them.
   */
  listSessions(filter: { sessionId?: string } = {}): Promise<SessionSummary[]> {
    return collectSessions((params) => this.request("session/list", params), filter);
  }

  /**
   * The handle of a process named in `connect({ resume: { processes } })`,
   * even if it already closed during the replay.
   */
  handle(processId: string): ProcessHandle | undefined {
    return this.adopted.get(processId);
  }

  /** A handle for a process the session already has; its whole retained output is replayed. */
  private adopt(processId: string): void {
    const handle = new ProcessHandle(processId, false, this);
    handle.started = true;
    this.handles.set(processId, handle);
    this.adopted.set(processId, handle);
  }

  get sessionId(): string {
    return this.session;
  }

  /** True while a socket is open and the session attached. */
  get connected(): boolean {
    return this.rpc?.isOpen ?? false;
  }

  on<E extends keyof ClientEvents>(event: E, listener: (...args: ClientEvents[E]) => void): () => void {
    return this.events.on(event, listener);
  }

  onDisconnected(listener: (reason: string) => void): () => void {
    return this.on("disconnected", listener);
  }

  /**
   * Sends a request, waiting for a reconnect if one is under way. Requests
   * cut off by a drop are sent again if that is safe (see RESENDABLE) and
   * fail with DisconnectedError otherwise.
   */
  async request<M extends RequestMethod>(method: M, params: ParamsOf<M>, timeoutMs?: number): Promise<ResultOf<M>> {
    const timeout = timeoutMs ?? this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    for (;;) {
      const rpc = await this.connection();
      try {
        return await rpc.request(method, params, timeout);
      } catch (error) {
        const resend = error instanceof DisconnectedError && RESENDABLE.has(method) && this.reconnectOptions.enabled;
        if (!resend || this.finalError) throw error;
      }
    }
  }

  async start(options: StartOptions): Promise<ProcessHandle> {
    const processId = options.processId ?? `p${++processCounter}-${randomId()}`;
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
    if (options.sandbox !== undefined) {
      // Without a cwd the project would be "/", and the whole disk writable.
      if (options.sandbox === "workspace-write" && options.cwd === undefined) {
        throw new ExecmuxError('sandbox "workspace-write" needs a cwd: the project the process may write');
      }
      params.sandbox = typeof options.sandbox === "string" ? codexSandbox(options.sandbox, params.cwd) : options.sandbox;
    }

    // Registered before the request so no notification can find it missing.
    const handle = new ProcessHandle(processId, params.tty ?? false, this);
    this.handles.set(processId, handle);
    try {
      handle.sandboxType = (await this.request("process/start", params)).sandboxType;
      handle.started = true;
    } catch (error) {
      if (this.handles.get(processId) === handle) this.handles.delete(processId);
      throw error;
    }
    return handle;
  }

  /** Upstream's catch-up read; long-polls up to `waitMs`; `timestamps` gives each chunk its `timeMs`. */
  read(processId: string, options: { afterSeq?: number; maxBytes?: number; waitMs?: number; timestamps?: boolean } = {}): Promise<ResultOf<"process/read">> {
    const timeout = (this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) + (options.waitMs ?? 0);
    return this.request("process/read", { processId, ...options }, timeout);
  }

  async list(): Promise<ProcessInfo[]> {
    return (await this.request("process/list", {})).processes;
  }

  /** A fresh writeId for an idempotent write. */
  newWriteId(): string {
    return `w-${Date.now().toString(36)}-${randomId()}`;
  }

  /** Closes the socket for good. Processes keep running until the daemon's session TTL ends them. */
  close(): void {
    this.finish(new DisconnectedError("client closed"));
  }

  // ---------------------------------------------------------------- connection

  private async open(resume: boolean, takeover = true): Promise<void> {
    const socket = await openSocket(this.url, this.options);
    const rpc = new RpcClient(
      socket,
      (method, params) => this.onNotification(method, params),
      (frame) => this.deliverOutput(frame.processId, frame.seq, frame.stream, frame.data),
      (reason, code) => this.onSocketClosed(rpc, reason, code),
      this.frameLimit,
    );
    // Only processes the daemon confirmed: a start still waiting for this
    // connection is not known to the daemon yet.
    const cursors = Object.fromEntries([
      ...this.followedToClose,
      ...[...this.handles].filter(([, handle]) => handle.started).map(([processId, handle]) => [processId, handle.lastSeq] as const),
    ]);
    this.acks?.reset();
    const timeout = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const outputOptions = {
      binaryOutput: this.options.binaryOutput ?? true,
      ...(this.ackWindowBytes ? { ackWindowBytes: this.ackWindowBytes } : {}),
    };
    const lifetime = {
      ...(this.options.detachedTtlMs !== undefined ? { detachedTtlMs: this.options.detachedTtlMs } : {}),
      ...(this.options.keepWhileRunning !== undefined ? { keepWhileRunning: this.options.keepWhileRunning } : {}),
    };
    const params: ParamsOf<"initialize"> = this.options.observe
      ? { clientName: this.clientName, observeSessionId: this.session, cursors, binaryOutput: outputOptions.binaryOutput }
      : resume
        ? { clientName: this.clientName, resumeSessionId: this.session, takeover, cursors, ...outputOptions, ...lifetime }
        : { clientName: this.clientName, ...outputOptions, ...lifetime };
    const result = await rpc
      .request("initialize", params, timeout)
      .catch((error: unknown) => {
        rpc.close();
        throw error;
      });
    this.session = result.sessionId;
    this.lifetime = {
      ...(result.detachedTtlMs !== undefined ? { detachedTtlMs: result.detachedTtlMs } : {}),
      ...(result.keepWhileRunning !== undefined ? { keepWhileRunning: result.keepWhileRunning } : {}),
    };
    // A quarter of the smallest window the daemon may apply, so credit never runs dry.
    // An observer's output is never held for credit: it acknowledges nothing.
    const window = this.observing ? undefined : (result.sharedAckWindowBytes ?? this.ackWindowBytes);
    this.acks = window
      ? new AckBatcher(
          (processId, bytes) => this.rpc?.notify("process/ack", { processId, bytes }),
          Math.max(1, Math.floor(window / 4)),
          Math.max(1, Math.floor((this.ackWindowBytes ?? window) / 4)),
        )
      : undefined;
    this.rpc = rpc;
    rpc.notify("initialized", {});
    for (const processId of result.unknownProcessIds ?? []) {
      this.handles.get(processId)?.fail(new SessionLostError(`process ${processId} ended and was removed while the client was disconnected`));
      this.handles.delete(processId);
    }
  }

  private get ackWindowBytes(): number | undefined {
    const window = this.options.ackWindowBytes ?? DEFAULT_ACK_WINDOW_BYTES;
    return window === false ? undefined : window;
  }

  private get clientName(): string {
    return this.options.clientName ?? "execmux-client";
  }

  /** The live connection, after waiting out a reconnect if one is under way. */
  private async connection(): Promise<RpcClient> {
    for (;;) {
      if (this.finalError) throw this.finalError;
      if (this.rpc?.isOpen) return this.rpc;
      if (!this.reconnecting) throw new DisconnectedError("not connected");
      await this.reconnecting;
    }
  }

  private onSocketClosed(rpc: RpcClient, reason: string, code: number | undefined): void {
    if (rpc !== this.rpc || this.finalError) return;
    this.rpc = undefined;
    this.events.emit("disconnected", reason);
    if (code === CloseCode.ObservedSessionEnded) {
      this.finish(new SessionLostError(`session ${this.session} ended (it expired); nothing more will come`));
      return;
    }
    if (code === CloseCode.SessionTakenOver) {
      // Someone else resumed the session on purpose. Taking it back would
      // evict them in turn, and two clients would fight over it forever.
      this.finish(new SessionLostError(`session ${this.session} was taken over by another connection`));
      return;
    }
    if (!this.reconnectOptions.enabled) {
      this.finish(new DisconnectedError(reason));
      return;
    }
    this.reconnecting ??= this.reconnectLoop().finally(() => {
      this.reconnecting = undefined;
    });
  }

  private async reconnectLoop(): Promise<void> {
    const options = this.reconnectOptions;
    const deadline = Date.now() + options.giveUpAfterMs;
    for (let attempt = 1; !this.finalError; attempt++) {
      const delayMs = backoffDelay(options, attempt);
      if (Date.now() + delayMs > deadline) {
        this.finish(new SessionLostError(`gave up reconnecting to ${this.url} after ${options.giveUpAfterMs} ms`));
        return;
      }
      this.events.emit("reconnecting", { attempt, delayMs });
      await sleep(delayMs);
      if (this.finalError) return;
      try {
        await this.open(!this.observing);
        this.events.emit("resumed", { sessionId: this.session, attempts: attempt });
        return;
      } catch (error) {
        if (error instanceof RpcRequestError && error.code === ErrorCode.InvalidRequest) {
          // "unknown session id": it expired while we were away.
          this.finish(new SessionLostError(`session ${this.session} is gone: ${error.message}`));
          return;
        }
        // The daemon is unreachable or the socket dropped again: try again.
      }
    }
  }

  /** Ends the client: every pending and future request, and every handle, fails with `error`. */
  private finish(error: ExecmuxError): void {
    if (this.finalError) return;
    this.finalError = error;
    const rpc = this.rpc;
    this.rpc = undefined;
    rpc?.close();
    this.acks?.reset();
    for (const handle of this.handles.values()) handle.fail(error);
    this.handles.clear();
    if (error instanceof SessionLostError) this.events.emit("sessionLost", error);
  }

  // ---------------------------------------------------------------- notifications

  /**
   * Hands output to its handle, then gives the daemon credit for it (in
   * batches, see AckBatcher).
   */
  private deliverOutput(processId: string, seq: number, stream: OutputStream, data: Uint8Array): void {
    const handle = this.handles.get(processId);
    if (!handle) return;
    const delivered = handle.deliverOutput(seq, stream, data);
    // A replayed seq never reaches the application, so it would never ack it.
    if (!delivered || !this.options.manualAcks) this.ackOutput(handle, data.length);
  }

  /** @internal Credit for `bytes` of a process's output the application consumed. */
  ackOutput(handle: ProcessHandle, bytes: number): void {
    // A closed process sends nothing more: its credit no longer matters.
    if (!handle.closed) this.acks?.add(handle.processId, bytes);
  }

  private onNotification(method: string, params: unknown): void {
    const { processId, seq } = params as { processId: string; seq: number };
    if (method === "process/started") {
      this.announce(params as ProcessStartedNotification);
      return;
    }
    const handle = this.handles.get(processId);
    if (!handle) return;
    switch (method) {
      case "process/output": {
        const { stream, chunk } = params as { stream: OutputStream; chunk: string };
        this.deliverOutput(processId, seq, stream, decodeBase64(chunk));
        break;
      }
      case "process/exited":
        handle.deliverExit(seq, (params as { exitCode: number }).exitCode);
        break;
      case "process/closed":
        handle.deliverClose(seq);
        this.handles.delete(processId);
        this.acks?.forget(processId);
        if (this.observing) this.rememberClosed(processId, seq);
        break;
      case "process/gap": {
        const gap = params as GapNotification;
        handle.deliverGap(gap);
        this.events.emit("gap", gap);
        break;
      }
    }
  }

  /** Observers: a handle for each process the daemon announces (once; a reconnect's repeat is ignored). */
  private announce(started: ProcessStartedNotification): void {
    if (!this.observing || this.handles.has(started.processId) || this.followedToClose.has(started.processId)) return;
    const handle = new ProcessHandle(started.processId, started.tty, this);
    handle.started = true;
    handle.origin = { argv: started.argv, argvTruncated: started.argvTruncated, startedAt: started.startedAt };
    this.handles.set(started.processId, handle);
    if (this.unclaimed) {
      this.unclaimed.push(handle);
      if (this.unclaimed.length > FOLLOWED_TO_CLOSE_LIMIT) this.unclaimed.shift();
    }
    this.events.emit("process", handle);
  }

  private rememberClosed(processId: string, seq: number): void {
    this.followedToClose.set(processId, seq);
    if (this.followedToClose.size > FOLLOWED_TO_CLOSE_LIMIT) this.followedToClose.delete(this.followedToClose.keys().next().value!);
  }
}

/** Closed processes an observer remembers across reconnects; the daemon keeps at most 256 closed per session by default. */
const FOLLOWED_TO_CLOSE_LIMIT = 4096;

export const connect = (url: string, options?: ConnectOptions) => ExecmuxClient.connect(url, options);

/**
 * Follows the session `sessionId` read-only: each process arrives as a
 * `process` event with its handle (output from the start of what the daemon
 * retains, then live; a `gap` where this observer fell behind and output
 * was evicted meanwhile). The owner is untouched; writes, signals and starts
 * fail with -32013. Your identity's own session, or any with an observer token.
 */
export const observe = (url: string, sessionId: string, options: Omit<ConnectOptions, "resume" | "observe"> = {}) =>
  ExecmuxClient.connect(url, { ...options, observe: { sessionId } });
