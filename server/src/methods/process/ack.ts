import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { ProcessContext } from "../context.js";

/**
 * Extension: credit flow control (`ackWindowBytes` in initialize). Clients
 * normally send this as a notification; as a request it is answered with {}.
 */
export function processAck(params: ParamsOf<"process/ack">, { connection }: ProcessContext): ResultOf<"process/ack"> {
  connection.ack(params.processId, params.bytes);
  return {};
}
