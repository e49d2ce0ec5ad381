import type { ParamsOf, ResultOf } from "@execmux/shared";
import { STARTING } from "../../session/session.js";
import type { ProcessContext } from "../context.js";

/** Extension: end of input. A pipe is closed; a PTY gets its EOF character (Ctrl-D). */
export async function processCloseStdin(
  params: ParamsOf<"process/closeStdin">,
  { session }: ProcessContext,
): Promise<ResultOf<"process/closeStdin">> {
  const entry = session.peek(params.processId);
  if (entry === undefined) return { status: "unknownProcess" };
  if (entry === STARTING) return { status: "starting" };
  return { status: await entry.closeStdin() };
}
