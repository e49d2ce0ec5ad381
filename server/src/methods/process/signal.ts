import { resolveSignalName } from "@execmux/shared/core";
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidParams } from "../../errors/rpc-error.js";
import type { ProcessContext } from "../context.js";

/** Unknown, starting and finished processes answer `{}`, as upstream: the signal had nowhere to go. */
export function processSignal(
  params: ParamsOf<"process/signal">,
  { session, connection }: ProcessContext,
): ResultOf<"process/signal"> {
  const signal = resolveSignalName(params.signal);
  // Upstream's only variant is `interrupt`; the POSIX names are execmux's extension.
  if (!signal) throw invalidParams(`unknown variant \`${params.signal}\`, expected \`interrupt\``);
  const process = session.find(params.processId);
  if (!process) return {};
  process.signal(signal);
  connection.deps.log.info({ processId: params.processId, signal }, "process signalled");
  return {};
}
