import type { ParamsOf, ResultOf } from "@execmux/shared";
import { STARTING } from "../session/session.js";
import type { ProcessContext } from "./context.js";

/** `running: false` when unknown or already exited, as upstream. */
export function processTerminate(
  params: ParamsOf<"process/terminate">,
  { session }: ProcessContext,
): ResultOf<"process/terminate"> {
  const entry = session.peek(params.processId);
  if (entry === undefined || entry === STARTING) return { running: false };
  return { running: entry.terminate() };
}
