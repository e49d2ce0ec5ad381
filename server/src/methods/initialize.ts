import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidParams } from "../errors/rpc-error.js";
import type { Session } from "../session/session.js";
import type { HandlerContext } from "./context.js";
import { environmentInfo } from "./environment/environment-info.js";

/**
 * Creates a session, or resumes one by id (processes and retained output
 * intact), or observes one read-only. Extensions: `takeover` evicts a stale
 * connection that still holds the session; `cursors` replays what the client
 * missed right after the reply; `detachedTtlMs` and `keepWhileRunning` set
 * how long the session outlives its connection; `observeSessionId` follows
 * a session without holding it (docs/sessions.md).
 */
export async function initialize(
  params: ParamsOf<"initialize">,
  { connection, jsonrpc, afterReply }: HandlerContext,
): Promise<ResultOf<"initialize">> {
  if (params.observeSessionId != null && params.resumeSessionId != null) {
    throw invalidParams("observeSessionId and resumeSessionId exclude each other: a connection either holds a session or observes one");
  }
  connection.beginInitialize(jsonrpc);
  const { registry, log } = connection.deps;
  try {
    // Awaited before the session is bound: from then on to the reply nothing
    // may wait, or a live event could reach the client ahead of the reply.
    // An observer's machinery is loaded by the first connection that observes, never at start-up.
    const [info, observerLink] = await Promise.all([
      environmentInfo(),
      params.observeSessionId != null ? import("../rpc/observer-link.js") : undefined,
    ]);
    if (params.observeSessionId != null && observerLink) {
      const link = observerLink.linkObserver(connection.observerPort());
      const session = registry.observe(params.observeSessionId, link.observer, connection.caller);
      const followFrom = connection.bindObserved(session, link);
      connection.configureOutput({ binaryOutput: params.binaryOutput ?? false });
      log.info({ clientName: params.clientName }, "session observed");
      const cursors = params.cursors ?? {};
      afterReply(() => followFrom(cursors));
      return { sessionId: session.id, environmentInfo: info, ...lifetimeOf(session), ...unknownProcessIds(session, params.cursors) };
    }
    const lifetime = { detachedTtlMs: params.detachedTtlMs, keepWhileRunning: params.keepWhileRunning };
    const session = params.resumeSessionId
      ? registry.resume(params.resumeSessionId, connection, params.takeover ?? false, params.clientName, connection.client, lifetime)
      : registry.create(connection, params.clientName, connection.client, lifetime);
    connection.bindSession(session);
    const windows = connection.configureOutput(params);
    log.info({ clientName: params.clientName, resumed: Boolean(params.resumeSessionId) }, "session attached");
    const askedLifetime = params.detachedTtlMs != null || params.keepWhileRunning != null;
    const result: ResultOf<"initialize"> = { sessionId: session.id, environmentInfo: info, ...windows, ...(askedLifetime ? lifetimeOf(session) : {}) };
    const cursors = params.cursors;
    if (!params.resumeSessionId || !cursors) return result;
    afterReply(() => connection.replay(session, cursors));
    return { ...result, ...unknownProcessIds(session, cursors) };
  } catch (error) {
    // A refused resume leaves the socket usable for a fresh initialize.
    connection.abandonInitialize();
    throw error;
  }
}

const lifetimeOf = (session: Session) => ({
  detachedTtlMs: session.lifetime.detachedTtlMs,
  keepWhileRunning: session.lifetime.keepWhileRunning,
});

/** Processes named in `cursors` that the session no longer has (closed and past retention). */
function unknownProcessIds(session: Session, cursors: Readonly<Record<string, number>> | null | undefined) {
  return cursors ? { unknownProcessIds: Object.keys(cursors).filter((processId) => session.peek(processId) === undefined) } : {};
}
