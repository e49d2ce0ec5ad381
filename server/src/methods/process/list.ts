import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { ProcessContext } from "../context.js";

/** Extension: every process of the session, with the seq a reader would resume from. */
export function processList(_params: ParamsOf<"process/list">, { session }: ProcessContext): ResultOf<"process/list"> {
  return { processes: session.list().map((process) => process.info()) };
}
