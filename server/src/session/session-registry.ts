/**
 * All sessions of the daemon: creation with an unguessable id, resume, and
 * expiry of sessions nobody reattached to within the TTL.
 *
 * Each session belongs to the client that created it (its token and
 * address, see daemon.ts), and the caps are kept fair between clients: a
 * client at its own quota makes room by expiring its own oldest detached
 * session, and past --max-detached-sessions the client with the most
 * detached sessions loses its oldest. One client churning sessions cannot
 * use up the daemon's slots or expire another client's sessions.
 */
import { randomBytes } from "node:crypto";
import { ErrorCode } from "@execmux/shared";
import { RpcError, invalidRequest, limitExceeded } from "../rpc/rpc-error.js";
import type { FastifyBaseLogger } from "fastify";
import type { Metrics } from "../metrics.js";
import { RetentionBudget } from "../process/retention-budget.js";
import type { ManagedProcess } from "../process/managed-process.js";
import type { ProcessTrees } from "../process/process-trees.js";
import { Session, type ClosedProcessIndex, type SessionSink } from "./session.js";

export interface RegistryOptions {
  readonly detachedSessionTtlMs: number;
  readonly closedRetentionMs: number;
  readonly maxSessions: number;
  readonly maxSessionsPerClient: number;
  readonly maxDetachedSessions: number;
  readonly maxProcessesPerSession: number;
  readonly maxProcesses: number;
  readonly maxClosedProcessesPerSession: number;
  readonly maxRetainedBytesTotal: number;
  /** How every child's tree is held and killed. */
  readonly processTrees: ProcessTrees;
  readonly metrics: Metrics;
  readonly log: FastifyBaseLogger;
}

/** 128 random bits, shaped like a UUID so upstream clients that parse one accept it. */
function newSessionId(): string {
  const hex = randomBytes(16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private readonly expiryTimers = new Map<Session, NodeJS.Timeout>();
  /** Every closed process still readable, in the order they closed: the first to be forgotten. */
  private readonly closedProcesses = new Map<ManagedProcess, Session>();
  private readonly closedIndex: ClosedProcessIndex = {
    add: (process, session) => this.closedProcesses.set(process, session),
    delete: (process) => this.closedProcesses.delete(process),
  };
  /** The daemon's retained output, charged by every process's log. */
  readonly retentionBudget: RetentionBudget;

  constructor(private readonly options: RegistryOptions) {
    this.retentionBudget = new RetentionBudget(options.maxRetainedBytesTotal);
    this.retentionBudget.setEvictor((bytes) => this.evictRetained(bytes));
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * A new session for `sink`, named `clientName` (initialize's, told to a
   * second client), owned by `client` (token and address: who counts it
   * against their quota).
   */
  create(sink: SessionSink, clientName: string, client: string): Session {
    const { maxSessions, maxSessionsPerClient } = this.options;
    if (this.sessionsOf(client) >= maxSessionsPerClient) {
      const oldest = this.oldestDetachedOf(client);
      if (!oldest) {
        throw limitExceeded("maxSessionsPerClient", `this client already has its maximum of ${maxSessionsPerClient} sessions, all of them attached`);
      }
      this.options.log.info("a client at its session quota started another; its oldest detached session expires");
      this.expire(oldest);
    }
    if (this.sessions.size >= maxSessions) {
      throw limitExceeded("maxSessions", `the daemon has its maximum of ${maxSessions} sessions`);
    }
    let id = newSessionId();
    while (this.sessions.has(id)) id = newSessionId();
    const session = new Session(id, client, this.options.closedRetentionMs, this.options.metrics, this.options.log, {
      maxProcessesPerSession: this.options.maxProcessesPerSession,
      maxProcesses: this.options.maxProcesses,
      maxClosedProcessesPerSession: this.options.maxClosedProcessesPerSession,
      countAllProcesses: () => this.runningProcesses(),
      closedProcesses: this.closedIndex,
    }, this.options.processTrees);
    session.attach(sink, clientName);
    this.sessions.set(id, session);
    this.options.metrics.sessionEvents.inc({ event: "created" });
    this.updateGauges();
    return session;
  }

  /**
   * Reattaches a detached session (upstream's errors for unknown and attached
   * ones). With `takeover`, a session held by another socket is taken from it:
   * the client proved it owns the session by knowing its id.
   */
  resume(sessionId: string, sink: SessionSink, takeover: boolean, clientName: string): Session {
    const session = this.sessions.get(sessionId);
    if (!session) throw invalidRequest(`unknown session id ${sessionId}`);
    if (session.attached) {
      if (!takeover) {
        const holder = session.holder;
        const who = holder ? ` (client "${holder.clientName}", attached ${Math.round((Date.now() - holder.since) / 1000)} s ago)` : "";
        throw new RpcError(ErrorCode.SessionAttached, `session ${sessionId} is already attached to another connection${who}`);
      }
      session.evictSink();
      this.options.metrics.sessionEvents.inc({ event: "taken_over" });
    }
    const timer = this.expiryTimers.get(session);
    if (timer) clearTimeout(timer);
    this.expiryTimers.delete(session);
    session.attach(sink, clientName);
    this.options.metrics.sessionEvents.inc({ event: "resumed" });
    this.updateGauges();
    return session;
  }

  /** The connection went away: keep the session for the TTL, then kill its processes. */
  detach(session: Session, sink: SessionSink): void {
    session.detach(sink);
    if (session.attached || !this.sessions.has(session.id)) return;
    const timer = setTimeout(() => this.expire(session), this.options.detachedSessionTtlMs);
    timer.unref();
    this.expiryTimers.set(session, timer);
    // Too many sessions waiting for a resume: the client with the most of
    // them loses the one it detached longest ago.
    if (this.expiryTimers.size > this.options.maxDetachedSessions) {
      const oldest = this.oldestDetachedOf(this.clientWithMostDetached());
      if (oldest) this.expire(oldest);
    }
    this.updateGauges();
  }

  private sessionsOf(client: string): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.client === client) count++;
    return count;
  }

  /** Detached sessions are in `expiryTimers` in the order they detached. */
  private oldestDetachedOf(client: string): Session | undefined {
    for (const session of this.expiryTimers.keys()) if (session.client === client) return session;
    return undefined;
  }

  private clientWithMostDetached(): string {
    const counts = new Map<string, number>();
    let most = "";
    let mostCount = 0;
    for (const session of this.expiryTimers.keys()) {
      const count = (counts.get(session.client) ?? 0) + 1;
      counts.set(session.client, count);
      if (count > mostCount) [most, mostCount] = [session.client, count];
    }
    return most;
  }

  private runningProcesses(): number {
    let total = 0;
    for (const session of this.sessions.values()) total += session.runningCount;
    return total;
  }

  /**
   * The retention budget is spent: closed processes are forgotten, the one
   * closed longest ago first; if that is not enough, the oldest output of
   * the session retaining most is evicted (its largest processes first), so
   * a session that floods evicts its own output before anyone else's.
   */
  private evictRetained(bytes: number): void {
    let freed = 0;
    for (const [process, session] of this.closedProcesses) {
      if (freed >= bytes) return;
      freed += process.log.chargedBytes;
      session.forget(process);
    }
    while (freed < bytes) {
      let largest: Session | undefined;
      let largestCharge = 0;
      for (const session of this.sessions.values()) {
        const charge = session.retainedCharge;
        if (charge > largestCharge) [largest, largestCharge] = [session, charge];
      }
      if (!largest) return;
      let progressed = false;
      const byCharge = largest.list().sort((a, b) => b.log.chargedBytes - a.log.chargedBytes);
      for (const process of byCharge) {
        const released = process.log.evictOldestCharge(bytes - freed);
        freed += released;
        progressed ||= released > 0;
        if (freed >= bytes) return;
      }
      // Every process is down to its newest chunk, which is always kept.
      if (!progressed) return;
    }
  }

  all(): Session[] {
    return [...this.sessions.values()];
  }

  get processTrees(): ProcessTrees {
    return this.options.processTrees;
  }

  /** Kills everything, in one batch: daemon shutdown. */
  killAll(): void {
    for (const timer of this.expiryTimers.values()) clearTimeout(timer);
    this.expiryTimers.clear();
    this.options.processTrees.killAll();
  }

  private expire(session: Session): void {
    this.options.log.info({ processes: session.size }, "detached session expired; killing its processes");
    clearTimeout(this.expiryTimers.get(session));
    this.expiryTimers.delete(session);
    this.sessions.delete(session.id);
    session.end();
    this.options.metrics.sessionEvents.inc({ event: "expired" });
    this.updateGauges();
  }

  private updateGauges(): void {
    const detached = this.expiryTimers.size;
    this.options.metrics.sessions.set({ state: "detached" }, detached);
    this.options.metrics.sessions.set({ state: "attached" }, this.sessions.size - detached);
  }
}
