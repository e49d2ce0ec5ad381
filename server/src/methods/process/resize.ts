import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidParams } from "../../errors/rpc-error.js";
import type { ProcessContext } from "../context.js";

/** Extension: a new window size for a PTY process (SIGWINCH reaches the foreground job). */
export function processResize(params: ParamsOf<"process/resize">, { session }: ProcessContext): ResultOf<"process/resize"> {
  const process = session.get(params.processId);
  if (!process.tty) throw invalidParams(`process ${params.processId} has no terminal to resize`);
  process.resize(params.cols, params.rows);
  return {};
}
