import type { ParamsOf, ResultOf } from "@execmux/shared";
import { limitExceeded } from "../../rpc/rpc-error.js";
import { STARTING } from "../../session/session.js";
import type { ProcessContext } from "../context.js";

/**
 * Bytes to stdin (or the PTY). Idempotent per `writeId`. Unknown ids are a
 * status, not an error, as upstream. Input the child has not read is held
 * only up to maxStdinBufferBytes: past it the write is refused whole (-32011).
 */
export function processWrite(params: ParamsOf<"process/write">, { session, connection }: ProcessContext): ResultOf<"process/write"> {
  const entry = session.peek(params.processId);
  if (entry === undefined) return { status: "unknownProcess" };
  if (entry === STARTING) return { status: "starting" };
  const data = Buffer.from(params.chunk, "base64");
  const status = entry.write(data, params.writeId);
  if (status === "stdinFull") {
    const { maxStdinBufferBytes } = connection.deps.config;
    throw limitExceeded(
      "maxStdinBufferBytes",
      `process ${params.processId} has not read ${entry.stdinQueuedBytes} bytes of its input yet; ` +
        `${data.length} more would pass the limit of ${maxStdinBufferBytes}. Nothing was written: retry once it has read`,
    );
  }
  if (status === "accepted") connection.deps.pollAfterInput.written();
  return { status };
}
