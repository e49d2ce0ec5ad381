/**
 * A session owns processes; a connection only borrows the session while it
 * is attached. When the socket drops the processes keep running and their
 * output keeps being retained, so a later connection can resume.
 */
import { invalidRequest, limitExceeded, unknownProcess } from "../rpc/rpc-error.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { ProcessHost } from "../host/process-host.js";
import type { ManagedProcess, ProcessEvent } from "../process/managed-process.js";

/** Where a session's live events go while a connection is attached. */
export interface SessionSink {
  processEvent(process: ManagedProcess, event: ProcessEvent): void;
  /** Another connection took the session over: stop using it and close. */
  evicted(): void;
}

export interface SessionLimits {
  readonly maxProcessesPerSession: number;
  readonly maxProcesses: number;
  readonly maxClosedProcessesPerSession: number;
  /** Processes running in the whole daemon (starting, running or not yet closed). */
  readonly countAllProcesses: () => number;
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
  /** Closed processes still readable, oldest close first: the first to be forgotten. */
  private readonly closed = new Set<ManagedProcess>();
  private sink: SessionSink | undefined;
  private heldBy: SessionHolder | undefined;
  /** Expired: nobody can read its processes any more. */
  private ended = false;

  constructor(
    readonly id: string,
    /** Who created it (token and address, see daemon.ts): the per-client quotas count it there. */
    readonly client: string,
    private readonly closedRetentionMs: number,
    readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly limits: SessionLimits,
    private readonly host: ProcessHost,
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

  attach(sink: SessionSink, clientName: string): void {
    this.sink = sink;
    this.heldBy = { clientName, since: Date.now() };
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

  commit(process: ManagedProcess): void {
    this.processes.set(process.processId, process);
    // The host's retention budget may forget it once closed: its id is free again then.
    process.onForgotten = () => {
      if (this.processes.get(process.processId) === process) this.processes.delete(process.processId);
      this.closed.delete(process);
    };
    this.metrics.processesActive.inc();
    this.metrics.processesStarted.inc(process.tty ? "true" : "false");
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

  /** Called by every process of this session for every event. */
  readonly onProcessEvent = (process: ManagedProcess, event: ProcessEvent): void => {
    this.sink?.processEvent(process, event);
    if (event.kind === "output") this.metrics.outputBytes.inc(event.stream, event.data.length);
    if (event.kind === "exited") {
      this.metrics.processesActive.dec();
      const { signal } = process.info();
      this.log.info({ processId: process.processId, exitCode: event.exitCode, signal }, "process exited");
      const reason = signal ? "signal" : event.exitCode === 0 ? "success" : "failure";
      this.metrics.processesExited.inc(reason);
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
    setTimeout(() => this.forget(process), this.closedRetentionMs).unref();
    while (this.closed.size > this.limits.maxClosedProcessesPerSession) {
      this.forget(this.closed.values().next().value!);
    }
  }

  /**
   * The session expired: the host kills every process tree of it at once,
   * with what closed processes left behind, and forgets them all.
   */
  end(): void {
    this.ended = true;
    for (const process of this.list()) if (!process.exited) this.metrics.processesActive.dec();
    const handles = this.list().flatMap((process) => (process.hostHandle === undefined ? [] : [process.hostHandle]));
    this.host.dropSession(this.id, handles);
    this.processes.clear();
    this.closed.clear();
  }

  /** True once no process of this session is still running. */
  get allExited(): boolean {
    return this.list().every((process) => process.exited);
  }
}
