/** A session as `session/list` shows it (docs/sessions.md): its state, lifetime and processes. */
import type { SessionProcess, SessionSummary } from "@execmux/shared";
import type { ManagedProcess } from "../process/managed-process.js";
import type { Session } from "./session.js";

export interface SummaryViewpoint {
  /** The caller's identity key. */
  readonly client: string;
  /** The session the calling connection holds or observes, if any. */
  readonly current: Session | undefined;
}

export function summarizeSession(session: Session, viewpoint: SummaryViewpoint): SessionSummary {
  return {
    sessionId: session.id,
    clientName: session.lastClientName,
    own: session.client === viewpoint.client,
    current: session === viewpoint.current,
    createdAt: session.createdAt,
    attached: session.attached,
    detachedAt: session.detachedAt ?? null,
    expiresAt: session.expiresAt ?? null,
    detachedTtlMs: session.lifetime.detachedTtlMs,
    keepWhileRunning: session.lifetime.keepWhileRunning,
    observers: session.observerCount,
    processes: session.list().map((process) => summarizeProcess(session, process)),
  };
}

function summarizeProcess(session: Session, process: ManagedProcess): SessionProcess {
  const record = session.recordOf(process);
  return {
    ...process.info(),
    argv: record?.argv ?? [],
    argvTruncated: record?.argvTruncated ?? true,
    startedAt: record?.startedAt ?? 0,
    exitedAt: record?.exitedAt ?? null,
  };
}
