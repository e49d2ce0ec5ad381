/**
 * A session owns processes; a connection only borrows the session while it
 * is attached. When the socket drops the processes keep running and their
 * output keeps being retained, so a later connection can resume.
 */
import { invalidRequest, limitExceeded, unknownProcess } from "../rpc/rpc-error.js";
import type { FastifyBaseLogger } from "fastify";
import type { Metrics } from "../metrics.js";
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
  readonly countAllProcesses: () => number;
}

/** Marks a process id whose spawn is in flight, so a racing duplicate start fails. */
export const STARTING = Symbol("starting");

export class Session {
  private readonly processes = new Map<string, ManagedProcess | typeof STARTING>();
  private sink: SessionSink | undefined;

  constructor(
    readonly id: string,
    /** Who created it (token and address, see daemon.ts): the per-client quotas count it there. */
    readonly client: string,
    private readonly closedRetentionMs: number,
    readonly metrics: Metrics,
    private readonly log: FastifyBaseLogger,
    private readonly limits: SessionLimits,
  ) {}

  /** Processes of this session, running or retained. */
  get size(): number {
    return this.processes.size;
  }

  get attached(): boolean {
    return this.sink !== undefined;
  }

  attach(sink: SessionSink): void {
    this.sink = sink;
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
    if (this.processes.size >= maxProcessesPerSession) {
      throw limitExceeded("maxProcessesPerSession", `this session has its maximum of ${maxProcessesPerSession} processes (running or retained)`);
    }
    if (countAllProcesses() >= maxProcesses) {
      throw limitExceeded("maxProcesses", `the daemon has its maximum of ${maxProcesses} processes (running or retained)`);
    }
    this.processes.set(processId, STARTING);
  }

  /** Gives up a claim after a failed spawn. */
  release(processId: string): void {
    if (this.processes.get(processId) === STARTING) this.processes.delete(processId);
  }

  commit(process: ManagedProcess): void {
    this.processes.set(process.processId, process);
    this.metrics.processesActive.inc();
    this.metrics.processesStarted.inc({ tty: String(process.tty) });
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
    if (event.kind === "output") this.metrics.outputBytes.inc({ stream: event.stream }, event.data.length);
    if (event.kind === "exited") {
      this.metrics.processesActive.dec();
      const { signal } = process.info();
      this.log.info({ processId: process.processId, exitCode: event.exitCode, signal }, "process exited");
      const reason = signal ? "signal" : event.exitCode === 0 ? "success" : "failure";
      this.metrics.processesExited.inc({ reason });
    }
    if (event.kind === "closed") {
      // Upstream keeps a closed process readable for a while, then frees its id.
      setTimeout(() => {
        if (this.processes.get(process.processId) === process) this.processes.delete(process.processId);
      }, this.closedRetentionMs).unref();
    }
  };

  /** Kills every process tree at once: expiry and shutdown. */
  killAll(): void {
    for (const process of this.list()) process.kill();
  }

  /** True once no process of this session is still running. */
  get allExited(): boolean {
    return this.list().every((process) => process.exited);
  }
}
