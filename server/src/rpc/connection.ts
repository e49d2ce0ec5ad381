/**
 * One connection, over a WebSocket or stdio (rpc/transport.ts): frames in,
 * replies and notifications out. Each request runs on its own (never queued
 * behind another), so a long-poll read cannot delay anything else on the
 * socket. The handshake state lives here; processes live in the session,
 * which outlives the socket.
 */
import { setMaxListeners } from "node:events";
import { CloseCode, ErrorCode, MALFORMED_MESSAGE_ID } from "@execmux/shared/core";
import { methods } from "../generated/methods.js";
import type { MethodFamily, RequestId, RequestMethod } from "@execmux/shared";
import type { ManagedProcess, ProcessEvent } from "../process/managed-process.js";
import { releaseSlab } from "../process/slab-pool.js";
import type { Session, SessionSink } from "../session/session.js";
import type { Caller } from "../session/session-registry.js";
import { ClientRequests } from "./client-requests.js";
import { ConnectionResources } from "./connection-resources.js";
import { dispatch, type DispatchingConnection, type RequestScope } from "./dispatch.js";
import { startHeartbeat } from "./heartbeat.js";
import {
  encodeBinaryOutput,
  encodeError,
  encodeNotification,
  processEndNotification,
  encodeOutputNotification,
  encodeRequest,
  encodeResult,
  parseFrame,
} from "./envelope.js";
import type { CheckedFrame, ParamsCheck } from "./frame-check.js";
import { InboundGate } from "./inbound-gate.js";
import type { ObserverLink, ObserverPort } from "./observer-link.js";
import { OFF_THREAD_FRAME_BYTES } from "./off-thread-frames.js";
import { Outbound } from "./outbound.js";
import { RateLimiter } from "./rate-limiter.js";
import { Replay } from "./replay.js";
import { ReplyBudget } from "./reply-budget.js";
import { lifecycleOf } from "./turn-scheduler.js";
import { RpcError, invalidRequest, limitExceeded } from "../errors/rpc-error.js";
import { Utf8Text, type MessageTransport, type OutgoingMessage } from "./transport.js";
import type { ConnectionDeps } from "./connection-deps.js";

export type { ConnectionDeps } from "./connection-deps.js";


/** Who is on the other end, for upstream's wording of a parse error. */
export interface PeerDescription {
  /** "websocket" or "stdio". */
  readonly transport: string;
  /** "127.0.0.1:39788" for a WebSocket peer; absent for stdio. */
  readonly address?: string;
  /**
   * The connection's identity key (one opaque string the auth layer computes
   * at the handshake from the credential, auth/identity.ts): it owns the sessions it creates, and the per-client
   * quotas count them against it.
   */
  readonly client?: string;
  /** Its credential has observer rights (--observer-token-file): it may list and observe every session. */
  readonly observesAll?: boolean;
  /** The daemon's port this client came in on: a proxied process must never reach it (network-proxy/gate.ts). */
  readonly localPort?: number | undefined;
}

/** How long a connection whose session was taken over waits for its requests' replies before it closes anyway. */
const EVICTED_CLOSE_WAIT_MS = 1_000;

export class Connection implements SessionSink, DispatchingConnection {
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
  /** Method families' per-connection state (file handles, HTTP streams). */
  private readonly resources = new ConnectionResources();
  /** Requests the daemon sent the client and waits on (network/policyRequest). */
  private readonly clientRequests = new ClientRequests((id, method, params) => this.send(encodeRequest(id, method, params, this.jsonrpc)));
  /** Requests still being handled; after the peer's end of input the connection closes once they replied. */
  private requestsInFlight = 0;
  /** Set once the session was taken over: closes the socket once no request is in flight. */
  private closeWhenAnswered: (() => void) | undefined;
  /** Frames being parsed off the event loop (they count as requests in flight). */
  private framesParsing = 0;
  /** The transport closed: a frame parsed off the event loop after that is dropped. */
  private closed = false;
  /** While `initialize` is being answered, later frames wait in the inbound gate, in order. */
  private answeringInitialize = false;
  private inputEnded = false;
  /** Replies the client has not taken yet; past the bound no further frame is read. */
  private readonly replyBudget: ReplyBudget;
  private readonly inbound: InboundGate;
  /** A resume with cursors whose replay the socket has not taken all of yet. */
  private replayer: Replay | undefined;
  /** Set when this connection observes a session (read-only) instead of holding one. */
  private follower: ObserverLink | undefined;
  /** Releases waiting for their reply to be written (holdUntilSent); all run when the connection closes. */
  private readonly heldUntilSent = new Set<() => void>();

  constructor(
    private readonly socket: MessageTransport,
    readonly deps: ConnectionDeps,
    private readonly peer: PeerDescription = { transport: "websocket" },
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
    // Every request waiting for room (replies, budgets) listens for the close: many are expected, each bounded by its budget.
    setMaxListeners(0, this.closing.signal);
    this.rateLimiter = new RateLimiter(deps.config.maxRequestsPerSecond);
    this.replyBudget = new ReplyBudget(deps.config.replyQueueBytes, () => this.outbound.unsentBytes);
    // Whatever a frame does, its failure ends this connection, never the daemon.
    this.inbound = new InboundGate(
      socket,
      this.replyBudget,
      this.rateLimiter,
      (data) => this.guarded(() => this.onFrame(data)),
      () => this.answeringInitialize,
      (reason) => deps.metrics.readPauses.inc(reason),
      { scheduler: deps.turns, owner: this, waitsAt: () => this.turnPlace() },
    );
    this.outbound.onProgress = () => {
      this.inbound.recheck();
      this.replyBudget.recheck();
      // Runs inside the outbound's send loop: a failure here ends this connection only.
      if (this.replayer) this.guarded(() => this.replayer?.pump());
      if (this.follower) this.guarded(() => this.follower?.pump());
    };
    this.handshakeTimer = setTimeout(() => {
      deps.log.info("no initialize in time; closing the connection");
      socket.close(1008, "initialize was not sent in time");
    }, deps.config.handshakeTimeoutMs);
    this.touch();
    socket.onMessage((data) => {
      this.touch();
      this.inbound.offer(data);
    });
    socket.onTooLarge((limitBytes) => this.guarded(() => this.onTooLarge(limitBytes)));
    socket.onInputEnd(() => this.guarded(() => this.onInputEnd()));
    socket.onClose(() => this.guarded(() => this.onClose()));
    socket.onError((error) => deps.log.debug({ err: error }, "socket error"));
    this.stopHeartbeat = socket.liveness
      ? startHeartbeat(socket.liveness, deps.config.pingIntervalMs, deps.config.pingTimeoutMs, () =>
          deps.log.info("connection stopped answering pings; dropping it"),
        )
      : () => undefined;
  }

  get session(): Session | undefined {
    return this.currentSession;
  }

  /**
   * Where this connection's next frame waits for its turn: its client's lifecycle place until it sent
   * `initialize` (so a resume comes after the detach its client's dropped connection queued there), then
   * its own. A client's frames before its `initialize` delay only its own connections coming and going.
   */
  private turnPlace(): unknown {
    return this.initializeRequested ? this : lifecycleOf(this.client);
  }

  /** The connection's identity key: who owns the sessions it creates, and whose quotas count them. */
  get client(): string {
    return this.peer.client ?? this.peer.transport;
  }

  /** Who is asking, for what the registry lets it see and observe. */
  get caller(): Caller {
    return { client: this.client, observesAll: this.peer.observesAll ?? false };
  }

  /** An observer may read, never act: anything else is refused with -32013. */
  assertMayCall(method: string): void {
    this.follower?.refuseUnlessAllowed(method);
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

  /** Upstream's handshake rule, worded per method family. */
  requireInitialized(family: MethodFamily): Session {
    this.assertNotEvicted();
    if (!this.initializeRequested || !this.currentSession) {
      throw invalidRequest(`client must call initialize before using ${family} methods`);
    }
    if (!this.initialized) throw invalidRequest(`client must send initialized before using ${family} methods`);
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

  /**
   * What an observer's follower (observer-link.ts, loaded only by a
   * connection that observes) needs of this connection: room on its socket,
   * a way to send, its dialect, and its end.
   */
  observerPort(): ObserverPort {
    return {
      hasRoom: () => this.outbound.writable && this.replyBudget.roomBytes > 0,
      send: (frame) => this.send(frame),
      dialect: () => ({ binary: this.binaryOutput, jsonrpc: this.jsonrpc }),
      recordOf: (process) => this.currentSession?.recordOf(process),
      guarded: (task) => this.guarded(task),
      close: (code, reason) => {
        this.deps.log.info("the observed session ended; closing its observer");
        this.closeWith(code, reason);
      },
    };
  }

  /**
   * Called by `initialize` once the registry let `link` observe `session`.
   * After the reply, every process is followed: from its cursor where
   * `cursors` names it, else from the start of its retained output.
   */
  bindObserved(session: Session, link: ObserverLink): (cursors: Readonly<Record<string, number>>) => void {
    this.bindSession(session);
    this.follower = link;
    return (cursors) => link.followAll(session, cursors);
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
    // Where binary messages cannot travel (stdio), output stays JSON: every client reads that form.
    this.binaryOutput = (options.binaryOutput ?? false) && this.socket.carriesBinary;
    if (this.binaryOutput) this.outbound.allowLargeChunks();
    return options.ackWindowBytes ? this.outbound.enableAcks(options.ackWindowBytes) : undefined;
  }

  /** Credit flow control: the client consumed `bytes` of a process's output. An observer's output is never held for credit. */
  ack(processId: string, bytes: number): void {
    if (this.follower) return;
    const process = this.currentSession?.find(processId);
    if (process) this.outbound.ack(process, bytes);
  }

  /** SessionSink: a takeover. Long-polls fail, the socket closes with 4001. */
  evicted(): void {
    this.wasEvicted = true;
    this.currentSession = undefined;
    // The new connection's replay (if any) starts from its own cursors.
    this.replayer?.close();
    this.closing.abort();
    this.deps.log.info("session taken over by another connection");
    // After the failed requests' replies: a long-poll waiting for output fails
    // at once, one waiting for the process host's answer once it comes. A
    // request that waits on regardless (a write for room) is not waited for long.
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      this.outbound.close();
      this.socket.close(CloseCode.SessionTakenOver, "session taken over by another connection");
    };
    const timer = setTimeout(close, EVICTED_CLOSE_WAIT_MS);
    timer.unref();
    this.closeWhenAnswered = () => {
      if (this.requestsInFlight === 0) setImmediate(close);
    };
    this.closeWhenAnswered();
  }

  /**
   * Resume with cursors: every retained event after each cursor, as ordinary
   * notifications, preceded by a `process/gap` when some were evicted. Sent
   * as the socket drains (rpc/replay.ts), never more at once than the
   * connection's bounds; a replayed process's live events follow its replay.
   */
  replay(session: Session, cursors: Readonly<Record<string, number>>): void {
    const replayer = (this.replayer ??= new Replay({
      hasRoom: () => this.outbound.writable && this.replyBudget.roomBytes > 0,
      holds: (process) => this.outbound.holds(process),
      sendGap: (process, gap) =>
        this.outbound.sendProcessFrame(process, encodeNotification("process/gap", { processId: process.processId, ...gap }, this.jsonrpc), 0),
      sendEvent: (process, event) => this.sendProcessEvent(process, event),
      failed: (error) => this.fail(error),
    }));
    for (const [processId, cursor] of Object.entries(cursors)) {
      const process = session.find(processId);
      if (process) replayer.add(process, cursor);
    }
    replayer.pump();
  }

  /** The daemon's listening port this connection came in on (absent over stdio). */
  get daemonPort(): number | undefined {
    return this.peer.localPort;
  }

  /** SessionSink: a request to the client (domain review); fails when it does not answer in time or the connection closes. */
  requestClient(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    return this.clientRequests.request(method, params, timeoutMs);
  }

  /** SessionSink: best effort, as upstream sends these; skipped while the client is not reading. */
  notify(method: string, params: unknown): void {
    if (!this.outbound.writable) return;
    this.guarded(() => this.send(encodeNotification(method, params, this.jsonrpc)));
  }

  processEvent(process: ManagedProcess, event: ProcessEvent): void {
    // Its replay will read this event from the process's log, in its place.
    if (this.replayer?.covers(process)) return;
    // Called from the process's I/O: a failure here must not reach the process or the daemon.
    this.guarded(() => this.sendProcessEvent(process, event));
  }

  private sendProcessEvent(process: ManagedProcess, event: ProcessEvent): void {
    const { processId } = process;
    switch (event.kind) {
      case "output": {
        const frame = this.binaryOutput
          ? (event.frame ?? encodeBinaryOutput(Buffer.from(processId), event.seq, event.stream, event.data))
          : encodeOutputNotification(JSON.stringify(processId), event.seq, event.stream, event.data, this.jsonrpc);
        this.outbound.sendProcessFrame(process, frame, event.data.length);
        // The encoder's hold on a pooled JSON frame: Outbound keeps its own for as long as it needs the frame.
        if (frame instanceof Utf8Text) releaseSlab(frame.bytes);
        break;
      }
      case "exited":
      case "closed":
        this.outbound.sendProcessFrame(process, processEndNotification(processId, event, process.sandboxDenied, this.jsonrpc), 0);
        break;
    }
    // A write's reply held for this answer follows it (poll-after-input.ts).
    this.deps.pollAfterInput.answered(process);
  }

  private send(frame: OutgoingMessage, written?: () => void): void {
    this.outbound.sendControl(frame, written);
  }

  /** Text and binary frames alike carry one JSON message (upstream accepts both). */
  private onFrame(data: Buffer): void {
    // The inbound gate already took this frame's rate token (every frame counts).
    if (data.length < OFF_THREAD_FRAME_BYTES) {
      this.onMessage(parseFrame(data.toString("utf8")));
      return;
    }
    const place = this.turnPlace();
    // Decoded, parsed and checked on a worker thread; this connection's later frames wait for it. Its
    // handling takes a turn in the place the frame waited at: a resume parsed meanwhile still comes after
    // the detach its client's dropped connection queued there before it (turn-scheduler.ts).
    this.framesParsing++;
    const handled = this.deps.frames
      .parse(data)
      .then(
        (message) =>
          new Promise<void>((done) =>
            this.deps.turns.run(place, () => {
              try {
                if (!this.closed) this.guarded(() => this.onMessage(message));
              } finally {
                done();
              }
            }),
          ),
      )
      .finally(() => {
        this.framesParsing--;
        this.closeOnceAnswered();
      });
    this.inbound.holdUntil(handled);
  }

  private onMessage(message: CheckedFrame): void {
    switch (message.kind) {
      case "malformed":
        // The connection stays open, as upstream's does.
        this.sendParseError(message.detail);
        return;
      case "response":
        if (this.clientRequests.settle(message.id, message.result, message.error)) return;
        // A reply to a request the daemon never sent is a confused client, and upstream closes on it.
        this.deps.log.info("closing the connection: a response to a request the daemon never sent");
        this.closeWith(1008, "unexpected response");
        return;
      case "notification":
        this.onNotification(message.method, message.params, message.checked);
        return;
      case "request":
        this.onRequest(message.id, message.method, message.params, message.jsonrpc, message.checked).catch((error: unknown) => this.fail(error));
        return;
    }
  }

  /** Upstream's words for a message that is not JSON-RPC, with id -1. */
  private sendParseError(detail: string): void {
    const where = this.peer.address ? `${this.peer.transport} ${this.peer.address}` : this.peer.transport;
    const kind = this.peer.transport === "websocket" ? "websocket " : "";
    const error = { code: ErrorCode.InvalidRequest, message: `failed to parse ${kind}JSON-RPC message from exec-server ${where}: ${detail}` };
    this.deps.metrics.errors.inc(String(error.code));
    this.send(encodeError(MALFORMED_MESSAGE_ID, error, false));
  }

  /**
   * A message past the transport's bound (a stdio line without its newline):
   * its id is lost, so a reply could never reach the request that waits for
   * it. The client learns why in a parse error, then the connection closes,
   * as a WebSocket closes with 1009 and as upstream ends its stdio session.
   */
  private onTooLarge(limitBytes: number): void {
    this.deps.log.warn({ limitBytes }, "closing the connection: a message exceeds the size limit");
    this.sendParseError(`message exceeds the limit of ${limitBytes} bytes (--max-message-bytes)`);
    this.closeWith(1009, "message too big");
  }

  /**
   * The peer sent its last message (stdin ended). Waiting calls return now
   * (long-polls answer with what they have), every request already read gets
   * its reply, and then the connection closes.
   */
  private onInputEnd(): void {
    this.inputEnded = true;
    this.closing.abort();
    this.closeOnceAnswered();
  }

  /** After the end of input: closes once no request is in flight and every queued reply was handed over. */
  private closeOnceAnswered(): void {
    if (!this.inputEnded || this.requestsInFlight > 0 || this.framesParsing > 0) return;
    void this.outbound.whenWritable().then(() => this.closeWith(1000, "end of input"));
  }

  private onNotification(method: string, params: unknown, checked?: ParamsCheck): void {
    if (method === "process/ack") {
      // Acks come as notifications: handled like the request, without a reply.
      void dispatch(this, method, params, this.requestScope(false, [], [], []), checked).catch(() => undefined);
      return;
    }
    if (method === "initialized" && this.initializeRequested) {
      this.initialized = true;
      return;
    }
    // Upstream closes the connection on any other notification, and on an
    // `initialized` that comes before `initialize`.
    const reason = method === "initialized" ? "received `initialized` notification before `initialize`" : `unexpected notification ${method}`;
    this.deps.log.info({ method: method.slice(0, 64) }, `closing the connection: ${reason}`);
    this.closeWith(1008, reason);
  }

  /** The parts of a handler's context that come from this connection. */
  private requestScope(jsonrpc: boolean, afterReply: (() => void)[], reservations: (() => void)[], untilSent: (() => void)[]): RequestScope {
    return {
      jsonrpc,
      afterReply: (task) => afterReply.push(task),
      signal: this.closing.signal,
      resources: this.resources,
      notify: (method, params) => this.send(encodeNotification(method, params, this.jsonrpc)),
      whenWritable: () => this.outbound.whenWritable(),
      replyRoomBytes: () => this.replyBudget.roomBytes,
      reserveReply: (bytes) => reservations.push(this.replyBudget.reserve(bytes)),
      holdReplyRoom: (bytes) => {
        const release = this.replyBudget.reserve(bytes);
        // Frames the hold kept waiting may be read again once it is gone.
        return () => {
          release();
          this.inbound.recheck();
        };
      },
      whenReplyRoom: (bytes) => this.replyBudget.whenRoom(bytes, this.closing.signal),
      holdUntilSent: (release) => {
        untilSent.push(release);
        this.heldUntilSent.add(release);
      },
    };
  }

  /** Runs `task`; if it throws, this connection ends (1011), the daemon and its sessions go on. */
  private guarded(task: () => void): void {
    try {
      task();
    } catch (error) {
      this.fail(error);
    }
  }

  /** A bug or a frame the daemon could not handle: this connection ends, the daemon and its sessions go on. */
  private fail(error: unknown): void {
    try {
      this.deps.log.error({ err: error }, "closing a connection after an unexpected error");
      this.closeWith(1011, "internal error");
    } catch {
      // The socket is beyond closing; terminate is all that is left.
      this.socket.liveness?.terminate();
    }
  }

  private closeWith(code: number, reason: string): void {
    this.outbound.close();
    this.socket.close(code, reason.slice(0, 120));
  }

  private async onRequest(id: RequestId, method: string, params: unknown, jsonrpc: boolean, checked?: ParamsCheck): Promise<void> {
    // Only known method names become labels: a client cannot grow the label set.
    const spec = Object.hasOwn(methods, method) ? methods[method as RequestMethod] : undefined;
    const label = spec ? method : "unknown";
    const stopTimer = this.deps.metrics.requestDuration.startTimer(label);
    this.requestsInFlight++;
    // Nothing else is handled meanwhile (the gate holds later frames), so there is one at a time.
    const initializing = method === "initialize";
    if (initializing) this.answeringInitialize = true;
    const afterReply: (() => void)[] = [];
    const reservations: (() => void)[] = [];
    const untilSent: (() => void)[] = [];
    let outcome: { result: unknown } | { error: unknown };
    try {
      outcome = { result: await dispatch(this, method, params, this.requestScope(jsonrpc, afterReply, reservations, untilSent), checked) };
    } catch (error) {
      outcome = { error };
    }
    const answer = () => this.guarded(() => this.answer(id, jsonrpc, outcome, { label, base64Result: spec?.base64Result ?? false, stopTimer, initializing, afterReply, reservations, untilSent }));
    // initialize's reply goes at once: its session is bound, and a live event of it must not reach the client
    // first (initialize.ts). Every other reply is built and sent inside its connection's turn (not after it: a
    // turn handed out as a resolved promise would run after the round that measured it, so hundreds of
    // coalesced replies, each stringified and written, were built in one pass while a bystander waited).
    if (initializing) this.deps.turns.runCharged(this, answer);
    else this.deps.turns.run(this, answer);
  }

  /** The reply to one request, sent; then what waited for it (tasks after the reply, the end of `initialize`). */
  private answer(
    id: RequestId,
    jsonrpc: boolean,
    outcome: { result: unknown } | { error: unknown },
    pending: { label: string; base64Result: boolean; stopTimer: () => void; initializing: boolean; afterReply: (() => void)[]; reservations: (() => void)[]; untilSent: (() => void)[] },
  ): void {
    const { metrics } = this.deps;
    const { afterReply, reservations, untilSent } = pending;
    let reply: string | Utf8Text;
    try {
      if (!("result" in outcome)) throw outcome.error;
      reply = encodeResult(id, outcome.result, jsonrpc, pending.base64Result);
    } catch (error) {
      afterReply.length = 0;
      const body =
        error instanceof RpcError ? error.toBody() : { code: ErrorCode.InternalError, message: String((error as Error)?.message) };
      if (!(error instanceof RpcError)) this.deps.log.error({ err: error, method: pending.label }, "request failed");
      metrics.errors.inc(String(body.code));
      reply = encodeError(id, body, jsonrpc);
    } finally {
      pending.stopTimer();
    }
    try {
      // Queued, the reply counts as unsent; what was reserved for it is given back.
      this.send(reply, untilSent.length === 0 ? undefined : () => this.releaseHeld(untilSent));
      for (const release of reservations) release();
      // A task's failure (after the reply went out) is this connection's, handled by the caller.
      for (const task of afterReply) task();
    } finally {
      this.requestsInFlight--;
      this.closeWhenAnswered?.();
      if (pending.initializing) {
        this.answeringInitialize = false;
        this.inbound.recheck();
      }
      this.closeOnceAnswered();
    }
  }

  private releaseHeld(releases: readonly (() => void)[]): void {
    for (const release of releases) {
      this.heldUntilSent.delete(release);
      release();
    }
  }

  private onClose(): void {
    this.closed = true;
    // Whatever the socket never wrote is given back to its budgets.
    this.releaseHeld([...this.heldUntilSent]);
    this.inbound.close();
    this.replayer?.close();
    this.follower?.stop();
    clearTimeout(this.handshakeTimer);
    clearTimeout(this.idleTimer);
    this.stopHeartbeat();
    this.outbound.close();
    this.clientRequests.close();
    try {
      this.closing.abort();
      this.resources.disposeAll();
    } finally {
      // Whatever failed above, the session is freed for a resume (an observer only stops observing), in its
      // client's lifecycle place in the turns: thirty dropped at once wait there, not before a bystander.
      const session = this.currentSession;
      const follower = this.follower;
      if (session) {
        this.deps.turns.run(lifecycleOf(this.client), () =>
          this.guarded(() => {
            if (follower) session.removeObserver(follower.observer);
            else this.deps.registry.detach(session, this);
          }),
        );
      }
    }
  }
}
