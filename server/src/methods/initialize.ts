import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { HandlerContext } from "./context.js";
import { environmentInfo } from "./environment/environment-info.js";

/**
 * Creates a session, or resumes one by id (processes and retained output
 * intact). Extensions: `takeover` evicts a stale connection that still holds
 * the session; `cursors` replays what the client missed right after the reply.
 */
export async function initialize(
  params: ParamsOf<"initialize">,
  { connection, jsonrpc, afterReply }: HandlerContext,
): Promise<ResultOf<"initialize">> {
  connection.beginInitialize(jsonrpc);
  const { registry, log } = connection.deps;
  try {
    // Awaited before the session is bound: from then on to the reply nothing
    // may wait, or a live event could reach the client ahead of the reply.
    const info = await environmentInfo();
    const session = params.resumeSessionId
      ? registry.resume(params.resumeSessionId, connection, params.takeover ?? false, params.clientName)
      : registry.create(connection, params.clientName, connection.client);
    connection.bindSession(session);
    const windows = connection.configureOutput(params);
    log.info({ clientName: params.clientName, resumed: Boolean(params.resumeSessionId) }, "session attached");
    const result: ResultOf<"initialize"> = { sessionId: session.id, environmentInfo: info, ...windows };
    const cursors = params.cursors;
    if (!params.resumeSessionId || !cursors) return result;
    afterReply(() => connection.replay(session, cursors));
    return { ...result, unknownProcessIds: Object.keys(cursors).filter((processId) => session.peek(processId) === undefined) };
  } catch (error) {
    // A refused resume leaves the socket usable for a fresh initialize.
    connection.abandonInitialize();
    throw error;
  }
}
