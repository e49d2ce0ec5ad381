import type { ParamsOf, ResultOf } from "@execmux/shared";
import { STARTING } from "../../session/session.js";
import type { ProcessContext } from "../context.js";

/** Bytes to stdin (or the PTY). Idempotent per `writeId`. Unknown ids are a status, not an error, as upstream. */
export function processWrite(params: ParamsOf<"process/write">, { session, connection }: ProcessContext): ResultOf<"process/write"> {
  const entry = session.peek(params.processId);
  if (entry === undefined) return { status: "unknownProcess" };
  if (entry === STARTING) return { status: "starting" };
  const status = entry.write(Buffer.from(params.chunk, "base64"), params.writeId);
  if (status === "accepted") connection.deps.pollAfterInput.written();
  return { status };
}
