import type { ParamsOf, ResultOf, SessionSummary } from "@execmux/shared";
import type { HandlerContext } from "../context.js";

/**
 * One page's worth of summaries, in JSON bytes: a daemon may hold a
 * thousand sessions of 256 processes each, and one request must stay cheap
 * (each session is summarized only when it is on the page).
 */
const PAGE_BYTES = 512 * 1024;

/**
 * Extension: the sessions the caller's identity may see (its own; every
 * one with observer rights), oldest first, with their processes. Before or
 * after `initialize`: `execmux ps` lists without creating a session.
 */
export async function sessionList(params: ParamsOf<"session/list">, { connection }: HandlerContext): Promise<ResultOf<"session/list">> {
  // Loaded by the first listing, never at start-up.
  const { summarizeSession } = await import("../../session/session-summary.js");
  const { registry } = connection.deps;
  const caller = connection.caller;
  const viewpoint = { client: caller.client, current: connection.session };
  if (params.sessionId != null) {
    const session = registry.findVisible(params.sessionId, caller);
    return { sessions: session ? [summarizeSession(session, viewpoint)] : [] };
  }
  const after = params.cursor ?? 0;
  const sessions: SessionSummary[] = [];
  let bytes = 0;
  let lastSerial = after;
  for (const session of registry.visibleTo(caller)) {
    if (session.serial <= after) continue;
    if (bytes >= PAGE_BYTES) return { sessions, nextCursor: lastSerial };
    const summary = summarizeSession(session, viewpoint);
    bytes += JSON.stringify(summary).length;
    sessions.push(summary);
    lastSerial = session.serial;
  }
  return { sessions };
}
