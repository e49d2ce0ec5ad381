import type { ParamsOf, ResultOf } from "@execmux/shared";
import { STARTING } from "../../session/session.js";
import type { ProcessContext } from "../context.js";

/** `running: false` when unknown or already exited, as upstream. */
export async function processTerminate(
  params: ParamsOf<"process/terminate">,
  { session, connection }: ProcessContext,
): Promise<ResultOf<"process/terminate">> {
  const entry = session.peek(params.processId);
  if (entry === undefined || entry === STARTING) return { running: false };
  const running = await entry.terminate();
  if (running) connection.deps.log.info({ processId: params.processId }, "process terminating (SIGTERM to its tree)");
  return { running };
}
