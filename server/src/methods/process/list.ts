import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { ProcessContext } from "../context.js";

/** Extension: every process of the session, with the seq a reader would resume from (what is retained, the host knows). */
export async function processList(_params: ParamsOf<"process/list">, { session, connection }: ProcessContext): Promise<ResultOf<"process/list">> {
  const states = await connection.deps.host.list(session.id);
  return {
    processes: session.list().map((process) => process.info(process.hostHandle === undefined ? undefined : states.get(process.hostHandle))),
  };
}
