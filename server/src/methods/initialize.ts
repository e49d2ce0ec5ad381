import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { HandlerContext } from "./context.js";

/** Creates a session, or resumes one by id (processes and retained output intact). */
export function initialize(params: ParamsOf<"initialize">, { connection, jsonrpc }: HandlerContext): ResultOf<"initialize"> {
  connection.beginInitialize(jsonrpc);
  const { registry, log } = connection.deps;
  try {
    const session = params.resumeSessionId
      ? registry.resume(params.resumeSessionId, connection)
      : registry.create(connection);
    connection.bindSession(session);
    log.info({ clientName: params.clientName, resumed: Boolean(params.resumeSessionId) }, "session attached");
    return { sessionId: session.id };
  } catch (error) {
    // A refused resume leaves the socket usable for a fresh initialize.
    connection.abandonInitialize();
    throw error;
  }
}
