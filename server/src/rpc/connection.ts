/**
 * One WebSocket: frames in, replies and notifications out. Each request runs
 * on its own (never queued behind another), so a long-poll read cannot delay
 * anything else on the socket. The handshake state lives here; processes
 * live in the session, which outlives the socket.
 */
import type { WebSocket, RawData } from "ws";
import type { FastifyBaseLogger } from "fastify";
import { ErrorCode, isRequestMethod, type RequestId } from "@execmux/shared";
import type { ManagedProcess, ProcessEvent } from "../process/managed-process.js";
import type { Session, SessionSink } from "../session/session.js";
import type { SessionRegistry } from "../session/session-registry.js";
import type { Config } from "../config.js";
import type { Metrics } from "../metrics.js";
import type { Spawner } from "../spawner/spawner.js";
import { dispatch } from "./dispatch.js";
import { startHeartbeat } from "./heartbeat.js";
import {
  encodeBinaryOutput,
  encodeError,
  encodeNotification,
  encodeOutputNotification,
  encodeResult,
  parseFrame,
} from "./envelope.js";
import { Outbound } from "./outbound.js";
import type { PollAfterInput } from "./poll-after-input.js";
import { RateLimiter } from "./rate-limiter.js";
import { RpcError, invalidRequest, limitExceeded } from "./rpc-error.js";

export interface ConnectionDeps {
  readonly registry: SessionRegistry;
  readonly config: Config;
  readonly log: FastifyBaseLogger;
  readonly metrics: Metrics;
  readonly spawner: Spawner;
  readonly pollAfterInput: PollAfterInput;
}

export class Connection implements SessionSink {
  /** Notifications use the dialect of the client's `initialize`. */
  private jsonrpc = false;
  private initializeRequested = false;
  private initialized = false;
  private currentSession: Session | undefined;
  private readonly closing = new AbortController();
  private wasEvicted = false;
  private readonly stopHeartbeat: () => void;
  private readonly outbound: Outbound;
  /** Extension chosen in `initialize`: process/output as binary frames. */
  private binaryOutput = false;
  private readonly rateLimiter: RateLimiter;
  private longPolls = 0;
  private handshakeTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: WebSocket,
    readonly deps: ConnectionDeps,
  ) {
    this.outbound = new Outbound(
      socket,
      {
        socketHighWaterBytes: deps.config.socketHighWaterBytes,
        processQueueBytes: deps.config.processQueueBytes,
        sharedAckWindowBytes: deps.config.sharedAckWindowBytes,
      },
      deps.metrics,
    );
    this.rateLimiter = new RateLimiter(deps.config.maxRequestsPerSecond);
    this.handshakeTimer = setTimeout(() => {
      deps.log.info("no initialize in time; closing the connection");
      socket.close(1008, "initialize was not sent in time");
    }, deps.config.handshakeTimeoutMs);
    this.touch();
    socket.on("message", (data) => {
      this.touch();
      this.onFrame(data);
    });
    socket.on("close", () => this.onClose());
    socket.on("error", (error) => deps.log.debug({ err: error }, "socket error"));
    this.stopHeartbeat = startHeartbeat(socket, deps.config.pingIntervalMs, deps.config.pingTimeoutMs, () =>
      deps.log.info("connection stopped answering pings; dropping it"),
    );
  }

  get session(): Session | undefined {
    return this.currentSession;
  }

  /** Aborted when the socket closes: long-polls return at once. */
  get closedSignal(): AbortSignal {
    return this.closing.signal;
  }

  /** Throws once another connection took this one's session over. */
  assertNotEvicted(): void {
    if (this.wasEvicted) {
      throw new RpcError(ErrorCode.ConnectionClosed, "this connection's session was taken over by another connection");
    }
  }

  /** Upstream's handshake rule for process methods. */
  requireInitialized(): Session {
    this.assertNotEvicted();
    if (!this.initializeRequested || !this.currentSession) {
      throw invalidRequest("client must call initialize before using process methods");
    }
    if (!this.initialized) throw invalidRequest("client must send initialized before using process methods");
    return this.currentSession;
  }

  /** Marks `initialize` as seen; a second one on the same socket is refused. */
  beginInitialize(jsonrpc: boolean): void {
    if (this.initializeRequested) throw invalidRequest("initialize may only be sent once per connection");
    this.initializeRequested = true;
    this.jsonrpc = jsonrpc;
  }

  /** A refused `initialize` (bad resume) does not count as the one allowed. */
  abandonInitialize(): void {
    this.initializeRequested = false;
  }

  /** Called by `initialize` once it has created or resumed a session. */
  bindSession(session: Session): void {
    this.currentSession = session;
    clearTimeout(this.handshakeTimer);
  }

  /** Counts a waiting process/read against the connection's limit; call the result when it returns. */
  beginLongPoll(): () => void {
    if (this.longPolls >= this.deps.config.maxLongPolls) {
      throw limitExceeded("maxLongPolls", `this connection already has ${this.longPolls} waiting process/read calls`);
    }
    this.longPolls++;
    return () => {
      this.longPolls--;
    };
  }

  /** Restarts the idle timer: any frame from the client counts as activity. */
  private touch(): void {
    const { idleTimeoutMs } = this.deps.config;
    if (idleTimeoutMs === 0) return;
    if (this.idleTimer) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => {
      this.deps.log.info("idle connection closed");
      this.socket.close(4002, "idle timeout");
    }, idleTimeoutMs);
  }

  /** The output options a client chose in `initialize`; with acks, the windows for its reply. */
  configureOutput(options: { binaryOutput?: boolean | null; ackWindowBytes?: number | null }) {
    this.binaryOutput = options.binaryOutput ?? false;
    if (this.binaryOutput) this.outbound.allowLargeChunks();
    return options.ackWindowBytes ? this.outbound.enableAcks(options.ackWindowBytes) : undefined;
  }

  /** Credit flow control: the client consumed `bytes` of a process's output. */
  ack(processId: string, bytes: number): void {
    const process = this.currentSession?.find(processId);
    if (process) this.outbound.ack(process, bytes);
  }

  /** SessionSink: a takeover. Long-polls fail, the socket closes with 4001. */
  evicted(): void {
    this.wasEvicted = true;
    this.currentSession = undefined;
    this.closing.abort();
    this.deps.log.info("session taken over by another connection");
    // After the failed long-polls' replies, which are already queued.
    setImmediate(() => {
      this.outbound.close();
      this.socket.close(4001, "session taken over by another connection");
    });
  }

  /**
   * Resume with cursors: every retained event after each cursor, as ordinary
   * notifications, preceded by a `process/gap` when some were evicted. Runs
   * right after the initialize reply and before any I/O callback, so no live
   * event of these processes can overtake the replay.
   */
  replay(session: Session, cursors: Readonly<Record<string, number>>): void {
    for (const [processId, cursor] of Object.entries(cursors)) {
      const process = session.find(processId);
      if (!process) continue;
      const { gap, events } = process.replayAfter(cursor);
      if (gap) this.outbound.sendProcessFrame(process, encodeNotification("process/gap", { processId, ...gap }, this.jsonrpc), 0);
      for (const event of events) this.processEvent(process, event);
    }
  }

  processEvent(process: ManagedProcess, event: ProcessEvent): void {
    const { processId } = process;
    switch (event.kind) {
      case "output": {
        const frame = this.binaryOutput
          ? encodeBinaryOutput(Buffer.from(processId), event.seq, event.stream, event.data)
          : encodeOutputNotification(JSON.stringify(processId), event.seq, event.stream, event.data, this.jsonrpc);
        this.outbound.sendProcessFrame(process, frame, event.data.length);
        break;
      }
      case "exited":
        this.outbound.sendProcessFrame(
          process,
          encodeNotification("process/exited", { processId, seq: event.seq, exitCode: event.exitCode, sandboxDenied: process.sandboxDenied }, this.jsonrpc),
          0,
        );
        break;
      case "closed":
        this.outbound.sendProcessFrame(process, encodeNotification("process/closed", { processId, seq: event.seq }, this.jsonrpc), 0);
        break;
    }
  }

  private send(frame: string): void {
    this.outbound.sendControl(frame);
  }

  /** Text and binary frames alike carry one JSON message (upstream accepts both). */
  private onFrame(data: RawData): void {
    // Buffer.from(buffer) would copy: a Buffer is decoded where it is.
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    const text = bytes.toString("utf8");
    const message = parseFrame(text);
    switch (message.kind) {
      case "invalid":
        this.deps.metrics.errors.inc({ code: String(message.error.code) });
        this.send(encodeError(message.id, message.error, message.jsonrpc));
        return;
      case "response":
        return;
      case "notification":
        this.onNotification(message.method, message.params);
        return;
      case "request":
        if (!this.rateLimiter.take()) {
          const error = limitExceeded("maxRequestsPerSecond", `more than ${this.deps.config.maxRequestsPerSecond} requests per second on this connection`);
          this.deps.metrics.errors.inc({ code: String(error.code) });
          this.send(encodeError(message.id, error.toBody(), message.jsonrpc));
          return;
        }
        void this.onRequest(message.id, message.method, message.params, message.jsonrpc);
        return;
    }
  }

  private onNotification(method: string, params: unknown): void {
    if (method === "process/ack") {
      // Acks come as notifications: handled like the request, without a reply.
      void dispatch(this, method, params, false, []).catch(() => undefined);
      return;
    }
    if (method === "initialized") {
      if (!this.initializeRequested) {
        this.deps.log.warn("received `initialized` notification before `initialize`");
        return;
      }
      this.initialized = true;
      return;
    }
    this.deps.log.debug({ method }, "ignoring unknown notification");
  }

  private async onRequest(id: RequestId, method: string, params: unknown, jsonrpc: boolean): Promise<void> {
    const { metrics } = this.deps;
    // Only known method names become labels: a client cannot grow the label set.
    const stopTimer = metrics.requestDuration.startTimer({ method: isRequestMethod(method) ? method : "unknown" });
    try {
      const afterReply: (() => void)[] = [];
      const result = await dispatch(this, method, params, jsonrpc, afterReply);
      this.send(encodeResult(id, result, jsonrpc));
      for (const task of afterReply) task();
    } catch (error) {
      const body =
        error instanceof RpcError ? error.toBody() : { code: ErrorCode.InternalError, message: (error as Error).message };
      if (!(error instanceof RpcError)) this.deps.log.error({ err: error, method }, "request failed");
      metrics.errors.inc({ code: String(body.code) });
      this.send(encodeError(id, body, jsonrpc));
    } finally {
      stopTimer();
    }
  }

  private onClose(): void {
    clearTimeout(this.handshakeTimer);
    clearTimeout(this.idleTimer);
    this.stopHeartbeat();
    this.outbound.close();
    this.closing.abort();
    if (this.currentSession) this.deps.registry.detach(this.currentSession, this);
  }
}
