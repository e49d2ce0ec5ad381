/**
 * A session owns processes; a connection only borrows the session while it
 * is attached. When the socket drops the processes keep running and their
 * output keeps being retained, so a later connection can resume.
 */
import type { ProcessOrigin } from "@execmux/shared";
import { invalidRequest, limitExceeded, unknownProcess } from "../errors/rpc-error.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { ProcessHost } from "../host/process-host.js";
import type { ManagedProcess, ProcessEvent } from "../process/managed-process.js";

/** Where a session's live events go while a connection is attached. */
export interface SessionSink {
  processEvent(process: ManagedProcess, event: ProcessEvent): void;
  /** A notification outside any process's output stream (network/policyDecision); dropped when the client is not reading. */
  notify(method: string, params: unknown): void;
  /** A request to the client (network/policyRequest); rejects without an answer in time. */
  requestClient(method: string, params: unknown, timeoutMs: number): Promise<unknown>;
  /** Another connection took the session over: stop using it and close. */
  evicted(): void;
}

/**
 * A connection that follows the session read-only (rpc/session-follower.ts).
 * It is told of events, never waited for: it reads them from each process's
 * log at its own pace, so it cannot hold a process back.
 */
export interface SessionObserver {
  /** A process the session just committed (it may already have output). */
  processStarted(process: ManagedProcess): void;
  /** Something new is in the process's log (or it exited, or closed). */
  processEvent(process: ManagedProcess, event: ProcessEvent): void;
  /** The session ended: nothing more will come. */
  sessionEnded(): void;
}

/** How long a session lives once no connection holds it (initialize's detachedTtlMs and keepWhileRunning). */
export interface SessionLifetime {
  /** How long it waits for a resume before its processes are terminated. */
  readonly detachedTtlMs: number;
  /** While detached it does not expire as long as any of its processes runs; the TTL counts from the last exit. */
  readonly keepWhileRunning: boolean;
}

/** What the registry hears from a session. */
export interface SessionEvents {
  /** The last running process of the session exited (a lasting session's TTL may start). */
  allExited(session: Session): void;
}

/** How a process was started, for listings and observers: `ProcessOrigin` plus when it exited. */
export interface ProcessRecord extends ProcessOrigin {
  exitedAt: number | null;
}

/** A listing or observer carries at most this much of a process's argv (a start may carry a megabyte). */
const ARGV_SUMMARY_ENTRIES = 64;
const ARGV_SUMMARY_CHARS = 4096;

/** The argv as listings show it: at most 64 entries and 4,096 characters in all. */
export function summarizeArgv(argv: readonly string[], startedAt: number): ProcessOrigin {
  const kept: string[] = [];
  let room = ARGV_SUMMARY_CHARS;
  for (const argument of argv.slice(0, ARGV_SUMMARY_ENTRIES)) {
    if (room <= 0) break;
    kept.push(argument.slice(0, room));
    room -= argument.length;
  }
  const truncated = kept.length < argv.length || room < 0;
  return { argv: kept, argvTruncated: truncated, startedAt };
}

export interface SessionLimits {
  readonly maxProcessesPerSession: number;
  readonly maxProcesses: number;
  readonly maxClosedProcessesPerSession: number;
  /** Processes running in the whole daemon (starting, running or not yet closed). */
  readonly countAllProcesses: () => number;
  /** After an expiry's SIGTERM, how long until SIGKILL. */
  readonly killGraceMs: number;
}

/** Marks a process id whose spawn is in flight, so a racing duplicate start fails. */
export const STARTING = Symbol("starting");

/** Who holds a session: named in the error a second client gets, so a person knows which one to stop. */
export interface SessionHolder {
  readonly clientName: string;
  readonly since: number;
}

export class Session {
  private readonly processes = new Map<string, ManagedProcess | typeof STARTING>();
  /** How each started process was started (weak: an observer behind may still announce a forgotten one). */
  private readonly records = new WeakMap<ManagedProcess, ProcessRecord>();
  private readonly observers = new Set<SessionObserver>();
  readonly createdAt = Date.now();
  /** When the last connection left (undefined while one holds it). */
  detachedAt: number | undefined;
  /** When it expires unless resumed (undefined while attached or kept for a running process). */
  expiresAt: number | undefined;
  /** Closed processes still readable, oldest close first: the first to be forgotten. */
  private readonly closed = new Set<ManagedProcess>();
  private sink: SessionSink | undefined;
  private heldBy: SessionHolder | undefined;
  /** Expired: nobody can read its processes any more. */
  private ended = false;

  constructor(
    readonly id: string,
    /**
     * The identity key of the connection that created it (one opaque string
     * from the auth layer, auth/identity.ts): it owns the session (only it may
     * resume it), and the per-client quotas count it there.
     */
    readonly client: string,
    /** Creation order, for listing pages. */
    readonly serial: number,
    public lifetime: SessionLifetime,
    private readonly closedRetentionMs: number,
    readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly limits: SessionLimits,
    private readonly host: ProcessHost,
    private readonly events: SessionEvents,
  ) {}

  /** Processes of this session, running or retained. */
  get size(): number {
    return this.processes.size;
  }

  /**
   * What the process limits count: starting, running, and exited with
   * output still open. A closed process costs only its retained output,
   * which the retention budget charges, so it never locks a session out.
   */
  get runningCount(): number {
    return this.processes.size - this.closed.size;
  }

  get attached(): boolean {
    return this.sink !== undefined;
  }

  /** The client attached now, if any. */
  get holder(): SessionHolder | undefined {
    return this.sink ? this.heldBy : undefined;
  }

  /** The clientName of the connection that held it last (or holds it now). */
  get lastClientName(): string {
    return this.heldBy?.clientName ?? "";
  }

  attach(sink: SessionSink, clientName: string): void {
    this.sink = sink;
    this.heldBy = { clientName, since: Date.now() };
    this.detachedAt = undefined;
    this.expiresAt = undefined;
  }

  /** Starts telling `observer` of processes and events (an ended session is no longer in the registry to be observed). */
  addObserver(observer: SessionObserver): void {
    this.observers.add(observer);
  }

  removeObserver(observer: SessionObserver): void {
    this.observers.delete(observer);
  }

  get observerCount(): number {
    return this.observers.size;
  }

  /** How the process was started (and when it exited), while the session keeps it. */
  recordOf(process: ManagedProcess): ProcessRecord | undefined {
    return this.records.get(process);
  }

  detach(sink: SessionSink): void {
    if (this.sink === sink) this.sink = undefined;
  }

  /** Drops the attached connection for a takeover. */
  evictSink(): void {
    const sink = this.sink;
    this.sink = undefined;
    sink?.evicted();
  }

  /** Claims a process id for a start; throws upstream's error if it is taken, -32011 past a limit. */
  reserve(processId: string): void {
    if (this.processes.has(processId)) throw invalidRequest(`process ${processId} already exists`);
    const { maxProcessesPerSession, maxProcesses, countAllProcesses } = this.limits;
    if (this.runningCount >= maxProcessesPerSession) {
      throw limitExceeded("maxProcessesPerSession", `this session already runs its maximum of ${maxProcessesPerSession} processes`);
    }
    if (countAllProcesses() >= maxProcesses) {
      throw limitExceeded("maxProcesses", `the daemon already runs its maximum of ${maxProcesses} processes`);
    }
    this.processes.set(processId, STARTING);
  }

  /**
   * Forgets a closed process: its id is free again and reading it answers
   * "unknown process id", as upstream after its retention time.
   */
  forget(process: ManagedProcess): void {
    if (this.processes.get(process.processId) === process) this.processes.delete(process.processId);
    if (!this.closed.delete(process)) return;
    process.dispose();
  }

  /** Forgets every closed process: the session is going away. */
  forgetClosed(): void {
    for (const process of [...this.closed]) this.forget(process);
  }

  /** Gives up a claim after a failed spawn. */
  release(processId: string): void {
    if (this.processes.get(processId) === STARTING) this.processes.delete(processId);
  }

  /** The spawn succeeded: the process is the session's, and observers hear of it. */
  commit(process: ManagedProcess, origin: ProcessOrigin): void {
    this.processes.set(process.processId, process);
    this.records.set(process, { ...origin, exitedAt: null });
    // The host's retention budget may forget it once closed: its id is free again then.
    process.onForgotten = () => {
      if (this.processes.get(process.processId) === process) this.processes.delete(process.processId);
      this.closed.delete(process);
    };
    this.metrics.processesActive.inc();
    this.metrics.processesStarted.inc(process.tty ? "true" : "false");
    for (const observer of this.observers) observer.processStarted(process);
  }

  /** The process, or upstream's -32600 for an unknown or still-starting id. */
  get(processId: string): ManagedProcess {
    const entry = this.processes.get(processId);
    if (entry === undefined) throw unknownProcess(processId);
    if (entry === STARTING) throw invalidRequest(`process id ${processId} is starting`);
    return entry;
  }

  /** The process if it exists and has started. */
  find(processId: string): ManagedProcess | undefined {
    const entry = this.processes.get(processId);
    return entry === STARTING ? undefined : entry;
  }

  /** The entry as it is, for callers that answer "starting" or "unknown" themselves. */
  peek(processId: string): ManagedProcess | typeof STARTING | undefined {
    return this.processes.get(processId);
  }

  list(): ManagedProcess[] {
    return [...this.processes.values()].filter((entry): entry is ManagedProcess => entry !== STARTING);
  }

  /** Best effort, as upstream: nothing is kept for a client that is not attached. */
  notifyClient(method: string, params: unknown): void {
    this.sink?.notify(method, params);
  }

  /** Asks the attached client; with none attached, there is nobody to answer. */
  requestClient(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    if (!this.sink) return Promise.reject(new Error("no client is attached to the session"));
    return this.sink.requestClient(method, params, timeoutMs);
  }

  /** Called by every process of this session for every event. */
  readonly onProcessEvent = (process: ManagedProcess, event: ProcessEvent): void => {
    // An ended session's processes are the host's to finish (end() counted them).
    if (this.ended) return;
    this.sink?.processEvent(process, event);
    for (const observer of this.observers) observer.processEvent(process, event);
    if (event.kind === "output") this.metrics.outputBytes.inc(event.stream, event.data.length);
    if (event.kind === "exited") {
      this.metrics.processesActive.dec();
      const { signal } = process.info();
      this.log.info({ processId: process.processId, exitCode: event.exitCode, signal }, "process exited");
      const reason = signal ? "signal" : event.exitCode === 0 ? "success" : "failure";
      this.metrics.processesExited.inc(reason);
      const record = this.records.get(process);
      if (record) record.exitedAt = Date.now();
      if (this.allExited) this.events.allExited(this);
    }
    if (event.kind === "closed") this.retainClosed(process);
  };

  /**
   * Upstream keeps a closed process readable for a while, then frees its id.
   * Past the per-session count the oldest closed one goes first, so quick
   * starts in a row never run into a limit.
   */
  private retainClosed(process: ManagedProcess): void {
    if (this.processes.get(process.processId) !== process) return;
    if (this.ended) {
      this.processes.delete(process.processId);
      process.dispose();
      return;
    }
    this.closed.add(process);
    // A lasting session keeps what its processes ended with until it ends
    // (within the count below and the retention budget): a job detached
    // yesterday still shows its exit code.
    if (!this.lifetime.keepWhileRunning) setTimeout(() => this.forget(process), this.closedRetentionMs).unref();
    while (this.closed.size > this.limits.maxClosedProcessesPerSession) {
      this.forget(this.closed.values().next().value!);
    }
  }

  /**
   * The session ended: every process still running gets SIGTERM (to its
   * whole tree), and after the kill grace the host SIGKILLs whatever of the
   * session is left, what closed processes left behind included, and
   * forgets it all. Returns how many processes were still running.
   */
  end(): number {
    this.ended = true;
    const processes = this.list();
    const running = processes.filter((process) => !process.exited);
    for (const process of running) {
      this.metrics.processesActive.dec();
      void process.terminate();
    }
    const handles = processes.flatMap((process) => (process.hostHandle === undefined ? [] : [process.hostHandle]));
    const drop = () => this.host.dropSession(this.id, handles);
    if (running.length === 0) drop();
    else setTimeout(drop, this.limits.killGraceMs).unref();
    this.processes.clear();
    this.closed.clear();
    for (const observer of [...this.observers]) observer.sessionEnded();
    this.observers.clear();
    return running.length;
  }

  /** True once no process of this session is still running. */
  get allExited(): boolean {
    return this.list().every((process) => process.exited);
  }
}
