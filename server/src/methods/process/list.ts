import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { ProcessState } from "../../host/process-host.js";
import type { ManagedProcess } from "../../process/managed-process.js";
import type { ProcessContext } from "../context.js";
import { EncodedResult } from "../encoded-result.js";

/**
 * Each host listing's reply, once written: the host's listings are shared by every request that waited
 * for the same one (fresh-single-flight.ts), and so is their reply while the session holds the same
 * processes. A flood of lists then costs one reply per host answer, not one per request.
 */
const replies = new WeakMap<Map<number, ProcessState>, { processes: readonly ManagedProcess[]; reply: EncodedResult<ResultOf<"process/list">> }>();

const sameProcesses = (a: readonly ManagedProcess[], b: readonly ManagedProcess[]) => a.length === b.length && a.every((process, index) => process === b[index]);

/** Extension: every process of the session, with the seq a reader would resume from (what is retained, the host knows). */
export async function processList(_params: ParamsOf<"process/list">, { session, connection }: ProcessContext): Promise<EncodedResult<ResultOf<"process/list">>> {
  const states = await connection.deps.host.list(session.id);
  const processes = session.list();
  const known = replies.get(states);
  if (known && sameProcesses(known.processes, processes)) return known.reply;
  const reply = EncodedResult.of<ResultOf<"process/list">>({
    processes: processes.map((process) => process.info(process.hostHandle === undefined ? undefined : states.get(process.hostHandle))),
  });
  replies.set(states, { processes, reply });
  return reply;
}
