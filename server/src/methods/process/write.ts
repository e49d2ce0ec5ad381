import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidParams, limitExceeded } from "../../errors/rpc-error.js";
import { STARTING } from "../../session/session.js";
import type { ProcessContext } from "../context.js";

/**
 * Bytes to stdin (or the PTY). Idempotent per `writeId`. Unknown ids are a
 * status, not an error, as upstream. Input the child has not read is held
 * only up to maxStdinBufferBytes: a write that does not fit is answered once
 * it does (see ManagedProcess.write); past that, -32011 and nothing written.
 */
export async function processWrite(
  params: ParamsOf<"process/write">,
  { session, connection }: ProcessContext,
): Promise<ResultOf<"process/write">> {
  // Upstream checks this in its handler, so after the handshake and before the process id.
  if (params.writeId === "") throw invalidParams("writeId must not be empty");
  const entry = session.peek(params.processId);
  if (entry === undefined) return { status: "unknownProcess" };
  if (entry === STARTING) return { status: "starting" };
  const data = Buffer.from(params.chunk, "base64");
  const retry = entry.isRetry(params.writeId);
  const status = await entry.write(data, params.writeId);
  if (status === "stdinFull") {
    const { maxStdinBufferBytes } = connection.deps.config;
    throw limitExceeded(
      "maxStdinBufferBytes",
      data.length > maxStdinBufferBytes
        ? `a write of ${data.length} bytes is larger than the limit of ${maxStdinBufferBytes} bytes of unread input per process; nothing was written: split it`
        : `process ${params.processId} has not read its input yet and another write is waiting for room ` +
            `(limit ${maxStdinBufferBytes} bytes of unread input); nothing was written: retry once an earlier write was answered`,
    );
  }
  if (status === "accepted" && !retry) {
    // In a rapid exchange the reply follows the process's answer (see poll-after-input.ts); a retry caused no answer.
    const answered = connection.deps.pollAfterInput.written(entry);
    if (answered) await answered;
  }
  return { status };
}
