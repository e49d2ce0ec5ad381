/**
 * All sessions of the daemon: creation with an unguessable id, resume,
 * observation, and expiry of sessions nobody reattached to within their TTL.
 *
 * Each session belongs to the identity that created it (the connection's
 * identity key, one opaque string from the auth layer, auth/identity.ts): only
 * that identity may resume it, and to any other its id is unknown, in the
 * same words as an id that never existed. A credential with observer rights
 * may list and observe every session, never resume one.
 *
 * The caps are kept fair between clients: a client at its own quota makes
 * room by expiring its own oldest detached session, and past
 * --max-detached-sessions the client with the most detached sessions loses
 * its oldest. One client churning sessions cannot use up the daemon's slots
 * or expire another client's sessions. A session kept for its running
 * processes (keepWhileRunning) is never expired to make room: past its
 * client's quota the new session is refused instead.
 */
import { randomBytes } from "node:crypto";
import { ErrorCode } from "@execmux/shared/core";
import { RpcError, invalidRequest, limitExceeded } from "../errors/rpc-error.js";
import type { Logger } from "../logger.js";
import type { ProcessHost } from "../host/process-host.js";
import type { Metrics } from "../metrics.js";
import { Session, type SessionLifetime, type SessionObserver, type SessionSink } from "./session.js";

export interface RegistryOptions {
  readonly detachedSessionTtlMs: number;
  /** The longest TTL a client may ask for. */
  readonly maxSessionTtlMs: number;
  readonly maxLastingSessionsPerClient: number;
  readonly maxObserversPerSession: number;
  readonly closedRetentionMs: number;
  readonly maxSessions: number;
  readonly maxSessionsPerClient: number;
  readonly maxDetachedSessions: number;
  readonly maxProcessesPerSession: number;
  readonly maxProcesses: number;
  readonly maxClosedProcessesPerSession: number;
  /** After an expiry's SIGTERM, how long until SIGKILL. */
  readonly killGraceMs: number;
  /** Where every process lives (its tree, its output): kept there, sessions outlive this daemon. */
  readonly host: ProcessHost;
  readonly metrics: Metrics;
  readonly log: Logger;
}

/** What a client asked of its session's lifetime in initialize (absent: unchanged, or the daemon's default). */
export interface LifetimeRequest {
  readonly detachedTtlMs?: number | null | undefined;
  readonly keepWhileRunning?: boolean | null | undefined;
}

/** Who is asking: the connection's identity key, and whether its credential has observer rights. */
export interface Caller {
  readonly client: string;
  readonly observesAll: boolean;
}

/** Why a session expired, for the log. */
type ExpiryReason = "ttl" | "clientQuota" | "maxDetachedSessions";

/** What the host keeps of a session for the next daemon (its opaque blob). */
interface SessionRecord {
  readonly client: string;
  readonly lifetime?: SessionLifetime;
}

export type RestoredProcessOf = ReturnType<ProcessHost["takeRestored"]>["processes"][number];

/** 128 random bits, shaped like a UUID so upstream clients that parse one accept it. */
function newSessionId(): string {
  const hex = randomBytes(16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Upstream's words for a session that does not exist; also what another identity hears of one that does. */
const unknownSession = (sessionId: string) => invalidRequest(`unknown session id ${sessionId}`);

export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  /**
   * Sessions no connection holds, in the order they detached, with their
   * expiry timer; no timer while a lasting session's processes run.
   */
  private readonly detached = new Map<Session, NodeJS.Timeout | undefined>();
  private nextSerial = 1;

  constructor(private readonly options: RegistryOptions) {}

  get size(): number {
    return this.sessions.size;
  }

  /**
   * A new session for `sink`, named `clientName` (initialize's, told to a
   * second connection of the same identity), owned by `client` (its
   * identity: who may resume it and whose quota counts it).
   */
  create(sink: SessionSink, clientName: string, client: string, request: LifetimeRequest = {}): Session {
    const { maxSessions, maxSessionsPerClient } = this.options;
    const lifetime = this.lifetimeFor(client, request, undefined);
    if (this.sessionsOf(client) >= maxSessionsPerClient) {
      const oldest = this.oldestExpirableOf(client);
      if (!oldest) {
        throw limitExceeded(
          "maxSessionsPerClient",
          `this client already has its maximum of ${maxSessionsPerClient} sessions, all of them attached or kept for their running processes`,
        );
      }
      this.options.log.info("a client at its session quota started another; its oldest detached session expires");
      this.expire(oldest, "clientQuota");
    }
    if (this.sessions.size >= maxSessions) {
      throw limitExceeded("maxSessions", `the daemon has its maximum of ${maxSessions} sessions`);
    }
    let id = newSessionId();
    while (this.sessions.has(id)) id = newSessionId();
    const session = this.makeSession(id, client, lifetime);
    session.attach(sink, clientName);
    this.sessions.set(id, session);
    this.record(session);
    this.options.metrics.sessionEvents.inc("created");
    this.updateGauges();
    return session;
  }

  /**
   * Reattaches a detached session of the caller's own identity (upstream's
   * errors for unknown and attached ones; another identity's session is
   * unknown). With `takeover`, a session held by another socket of the same
   * identity is taken from it.
   */
  resume(sessionId: string, sink: SessionSink, takeover: boolean, clientName: string, client: string, request: LifetimeRequest = {}): Session {
    const session = this.sessions.get(sessionId);
    if (!session || session.client !== client) throw unknownSession(sessionId);
    const lifetime = this.lifetimeFor(client, request, session);
    if (session.attached) {
      if (!takeover) {
        // Only ever the caller's own identity's connection, so naming it names no one else.
        const holder = session.holder;
        const who = holder ? ` (client "${holder.clientName}", attached ${Math.round((Date.now() - holder.since) / 1000)} s ago)` : "";
        throw new RpcError(ErrorCode.SessionAttached, `session ${sessionId} is already attached to another connection${who}`);
      }
      session.evictSink();
      this.options.metrics.sessionEvents.inc("taken_over");
    }
    clearTimeout(this.detached.get(session));
    this.detached.delete(session);
    session.lifetime = lifetime;
    session.attach(sink, clientName);
    this.record(session);
    this.options.metrics.sessionEvents.inc("resumed");
    this.updateGauges();
    return session;
  }

  /**
   * Follows a session read-only: the caller's own identity's, or any with
   * observer rights; to anyone else it is unknown.
   */
  observe(sessionId: string, observer: SessionObserver, caller: Caller): Session {
    const session = this.sessions.get(sessionId);
    if (!session || !this.mayObserve(caller, session)) throw unknownSession(sessionId);
    const { maxObserversPerSession } = this.options;
    if (session.observerCount >= maxObserversPerSession) {
      throw limitExceeded("maxObserversPerSession", `session ${sessionId} already has its maximum of ${maxObserversPerSession} observers`);
    }
    session.addObserver(observer);
    this.options.metrics.sessionEvents.inc("observed");
    return session;
  }

  mayObserve(caller: Caller, session: Session): boolean {
    return caller.observesAll || session.client === caller.client;
  }

  /** Sessions `caller` may see, oldest first. */
  visibleTo(caller: Caller): Session[] {
    return [...this.sessions.values()].filter((session) => this.mayObserve(caller, session));
  }

  /** The session by id, if `caller` may see it. */
  findVisible(sessionId: string, caller: Caller): Session | undefined {
    const session = this.sessions.get(sessionId);
    return session && this.mayObserve(caller, session) ? session : undefined;
  }

  /** The connection went away: keep the session for its TTL (or while its processes run, if asked), then end it. */
  detach(session: Session, sink: SessionSink): void {
    session.detach(sink);
    if (session.attached || !this.sessions.has(session.id)) return;
    session.detachedAt = Date.now();
    this.detached.set(session, undefined);
    this.record(session);
    this.startExpiry(session);
    // Too many sessions waiting for a resume: the client with the most of
    // them loses the one it detached longest ago.
    if (this.detached.size > this.options.maxDetachedSessions) {
      const oldest = this.oldestExpirableOf(this.clientWithMostExpirable());
      if (oldest) this.expire(oldest, "maxDetachedSessions");
    }
    this.updateGauges();
  }

  private makeSession(id: string, client: string, lifetime: SessionLifetime): Session {
    const limits = {
      maxProcessesPerSession: this.options.maxProcessesPerSession,
      maxProcesses: this.options.maxProcesses,
      maxClosedProcessesPerSession: this.options.maxClosedProcessesPerSession,
      countAllProcesses: () => this.runningProcesses(),
      killGraceMs: this.options.killGraceMs,
    };
    const events = { allExited: (ended: Session) => this.onAllExited(ended) };
    const { closedRetentionMs, metrics, log, host } = this.options;
    return new Session(id, client, this.nextSerial++, lifetime, closedRetentionMs, metrics, log, limits, host, events);
  }

  /**
   * The host keeps each session's record, so a daemon started after this one
   * died finds it again (restore), and expires it itself if none comes, by
   * the same lifetime.
   */
  private record(session: Session): void {
    const blob = Buffer.from(JSON.stringify({ client: session.client, lifetime: session.lifetime } satisfies SessionRecord));
    const { detachedTtlMs, keepWhileRunning } = session.lifetime;
    this.options.host.putSession(session.id, detachedTtlMs, session.attached, keepWhileRunning, blob);
  }

  /**
   * Sessions the host kept from an earlier daemon: each comes back detached,
   * its processes with it as the host has them, to be resumed within its TTL.
   */
  restore(restored: ReturnType<ProcessHost["takeRestored"]>, adopt: (session: Session, process: RestoredProcessOf) => void): void {
    for (const kept of restored.sessions) {
      let record: SessionRecord = { client: "-@restored" };
      try {
        record = JSON.parse(kept.blob.toString("utf8")) as SessionRecord;
      } catch {
        // An unreadable record: the session is still there, counted to nobody's quota.
      }
      const lifetime = record.lifetime ?? { detachedTtlMs: this.options.detachedSessionTtlMs, keepWhileRunning: false };
      const session = this.makeSession(kept.id, record.client, lifetime);
      this.sessions.set(kept.id, session);
      for (const process of restored.processes.filter((candidate) => candidate.sessionId === kept.id)) adopt(session, process);
      session.detachedAt = Date.now();
      this.detached.set(session, undefined);
      this.startExpiry(session);
    }
    this.updateGauges();
  }

  /**
   * A detached session's countdown, unless it is kept while its processes
   * run and one still does: then it starts when the last one exits.
   */
  private startExpiry(session: Session): void {
    if (session.lifetime.keepWhileRunning && !session.allExited) {
      this.options.log.info({ processes: session.runningCount }, "detached session kept while its processes run");
      return;
    }
    const ttl = session.lifetime.detachedTtlMs;
    const timer = setTimeout(() => this.expire(session, "ttl"), ttl);
    timer.unref();
    this.detached.set(session, timer);
    session.expiresAt = Date.now() + ttl;
  }

  private onAllExited(session: Session): void {
    if (this.detached.has(session) && this.detached.get(session) === undefined) this.startExpiry(session);
  }

  /**
   * The lifetime a client asked for, within the operator's bounds: a longer
   * TTL is cut to --max-session-ttl-ms; keeping a session alive for its
   * processes counts against --max-lasting-sessions-per-client and is
   * refused past it. Unasked, a resumed session keeps what it had.
   */
  private lifetimeFor(client: string, request: LifetimeRequest, existing: Session | undefined): SessionLifetime {
    const base = existing?.lifetime ?? { detachedTtlMs: this.options.detachedSessionTtlMs, keepWhileRunning: false };
    const detachedTtlMs = request.detachedTtlMs == null ? base.detachedTtlMs : Math.min(request.detachedTtlMs, this.options.maxSessionTtlMs);
    const keepWhileRunning = request.keepWhileRunning ?? base.keepWhileRunning;
    if (keepWhileRunning && !base.keepWhileRunning) {
      const { maxLastingSessionsPerClient } = this.options;
      const lasting = [...this.sessions.values()].filter((session) => session.client === client && session.lifetime.keepWhileRunning).length;
      if (lasting >= maxLastingSessionsPerClient) {
        throw limitExceeded(
          "maxLastingSessionsPerClient",
          maxLastingSessionsPerClient === 0
            ? "this daemon keeps no session alive for its running processes (--max-lasting-sessions-per-client 0)"
            : `this client already has its maximum of ${maxLastingSessionsPerClient} sessions kept alive while their processes run`,
        );
      }
    }
    return { detachedTtlMs, keepWhileRunning };
  }

  private sessionsOf(client: string): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.client === client) count++;
    return count;
  }

  /** Detached sessions whose countdown runs, in the order they detached: what may be expired to make room. */
  private *expirable(): Iterable<Session> {
    for (const [session, timer] of this.detached) if (timer !== undefined) yield session;
  }

  private oldestExpirableOf(client: string): Session | undefined {
    for (const session of this.expirable()) if (session.client === client) return session;
    return undefined;
  }

  private clientWithMostExpirable(): string {
    const counts = new Map<string, number>();
    let most = "";
    let mostCount = 0;
    for (const session of this.expirable()) {
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

  all(): Session[] {
    return [...this.sessions.values()];
  }

  /** Daemon shutdown: no session expires any more (the host is ending them all). */
  stopExpiry(): void {
    for (const timer of this.detached.values()) clearTimeout(timer);
    this.detached.clear();
  }

  private expire(session: Session, reason: ExpiryReason): void {
    clearTimeout(this.detached.get(session));
    this.detached.delete(session);
    this.sessions.delete(session.id);
    // Counted before end(), which forgets the session's processes.
    const processes = session.size;
    const running = session.end();
    this.options.log.info(
      { reason, running, processes, killGraceMs: this.options.killGraceMs },
      running > 0
        ? `detached session expired: SIGTERM to its ${running} running processes, SIGKILL after ${this.options.killGraceMs} ms to whatever is left`
        : "detached session expired; none of its processes was running",
    );
    this.options.metrics.sessionEvents.inc("expired");
    this.updateGauges();
  }

  private updateGauges(): void {
    const detached = this.detached.size;
    this.options.metrics.sessions.set("detached", detached);
    this.options.metrics.sessions.set("attached", this.sessions.size - detached);
  }
}
