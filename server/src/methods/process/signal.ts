import { resolveSignalName, type ParamsOf, type ResultOf } from "@execmux/shared";
import { invalidParams } from "../../rpc/rpc-error.js";
import type { ProcessContext } from "../context.js";

export function processSignal(
  params: ParamsOf<"process/signal">,
  { session, connection }: ProcessContext,
): ResultOf<"process/signal"> {
  const signal = resolveSignalName(params.signal);
  if (!signal) throw invalidParams(`unknown signal ${params.signal}`);
  session.get(params.processId).signal(signal);
  connection.deps.log.info({ processId: params.processId, signal }, "process signalled");
  return {};
}
