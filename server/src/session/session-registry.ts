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
import { ErrorCode } from "@execmux/shared/core";
import { RpcError, invalidRequest, limitExceeded } from "../rpc/rpc-error.js";
import type { Logger } from "../logger.js";
import type { ProcessHost } from "../host/process-host.js";
import type { Metrics } from "../metrics.js";
import { Session, type SessionSink } from "./session.js";

export interface RegistryOptions {
  readonly detachedSessionTtlMs: number;
  readonly closedRetentionMs: number;
  readonly maxSessions: number;
  readonly maxSessionsPerClient: number;
  readonly maxDetachedSessions: number;
  readonly maxProcessesPerSession: number;
  readonly maxProcesses: number;
  readonly maxClosedProcessesPerSession: number;
  /** Where every process lives (its tree, its output): kept there, sessions outlive this daemon. */
  readonly host: ProcessHost;
  readonly metrics: Metrics;
  readonly log: Logger;
}

/** 128 random bits, shaped like a UUID so upstream clients that parse one accept it. */
/** What the host keeps of a session for the next daemon (its opaque blob). */
interface SessionRecord {
  readonly client: string;
}

export type RestoredProcessOf = ReturnType<ProcessHost["takeRestored"]>["processes"][number];

function newSessionId(): string {
  const hex = randomBytes(16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private readonly expiryTimers = new Map<Session, NodeJS.Timeout>();

  constructor(private readonly options: RegistryOptions) {}

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
    const session = this.makeSession(id, client);
    session.attach(sink, clientName);
    this.sessions.set(id, session);
    this.record(session);
    this.options.metrics.sessionEvents.inc("created");
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
      this.options.metrics.sessionEvents.inc("taken_over");
    }
    const timer = this.expiryTimers.get(session);
    if (timer) clearTimeout(timer);
    this.expiryTimers.delete(session);
    session.attach(sink, clientName);
    this.record(session);
    this.options.metrics.sessionEvents.inc("resumed");
    this.updateGauges();
    return session;
  }

  /** The connection went away: keep the session for the TTL, then kill its processes. */
  detach(session: Session, sink: SessionSink): void {
    session.detach(sink);
    if (session.attached || !this.sessions.has(session.id)) return;
    this.record(session);
    this.startExpiry(session);
    // Too many sessions waiting for a resume: the client with the most of
    // them loses the one it detached longest ago.
    if (this.expiryTimers.size > this.options.maxDetachedSessions) {
      const oldest = this.oldestDetachedOf(this.clientWithMostDetached());
      if (oldest) this.expire(oldest);
    }
    this.updateGauges();
  }

  private makeSession(id: string, client: string): Session {
    return new Session(id, client, this.options.closedRetentionMs, this.options.metrics, this.options.log, {
      maxProcessesPerSession: this.options.maxProcessesPerSession,
      maxProcesses: this.options.maxProcesses,
      maxClosedProcessesPerSession: this.options.maxClosedProcessesPerSession,
      countAllProcesses: () => this.runningProcesses(),
    }, this.options.host);
  }

  /**
   * The host keeps each session's record, so a daemon started after this one
   * died finds it again (restore), and expires it itself if none comes.
   */
  private record(session: Session): void {
    const blob = Buffer.from(JSON.stringify({ client: session.client } satisfies SessionRecord));
    this.options.host.putSession(session.id, this.options.detachedSessionTtlMs, session.attached, blob);
  }

  /**
   * Sessions the host kept from an earlier daemon: each comes back detached,
   * its processes with it as the host has them, to be resumed within the TTL.
   */
  restore(restored: ReturnType<ProcessHost["takeRestored"]>, adopt: (session: Session, process: RestoredProcessOf) => void): void {
    for (const kept of restored.sessions) {
      let record: SessionRecord = { client: "-@restored" };
      try {
        record = JSON.parse(kept.blob.toString("utf8")) as SessionRecord;
      } catch {
        // An unreadable record: the session is still there, counted to nobody's quota.
      }
      const session = this.makeSession(kept.id, record.client);
      this.sessions.set(kept.id, session);
      for (const process of restored.processes.filter((candidate) => candidate.sessionId === kept.id)) adopt(session, process);
      this.startExpiry(session);
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

  private startExpiry(session: Session): void {
    const timer = setTimeout(() => this.expire(session), this.options.detachedSessionTtlMs);
    timer.unref();
    this.expiryTimers.set(session, timer);
  }

  private runningProcesses(): number {
    let total = 0;
    for (const session of this.sessions.values()) total += session.runningCount;
    return total;
  }

  all(): Session[] {
    return [...this.sessions.values()];
  }

  /** Daemon shutdown: no session expires any more (the host is ending them all). */
  stopExpiry(): void {
    for (const timer of this.expiryTimers.values()) clearTimeout(timer);
    this.expiryTimers.clear();
  }

  private expire(session: Session): void {
    this.options.log.info({ processes: session.size }, "detached session expired; killing its processes");
    clearTimeout(this.expiryTimers.get(session));
    this.expiryTimers.delete(session);
    this.sessions.delete(session.id);
    session.end();
    this.options.metrics.sessionEvents.inc("expired");
    this.updateGauges();
  }

  private updateGauges(): void {
    const detached = this.expiryTimers.size;
    this.options.metrics.sessions.set("detached", detached);
    this.options.metrics.sessions.set("attached", this.sessions.size - detached);
  }
}
