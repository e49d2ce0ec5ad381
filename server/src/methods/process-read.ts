import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { ManagedProcess } from "../process/managed-process.js";
import type { Connection } from "../rpc/connection.js";
import type { ProcessContext } from "./context.js";

const MAX_WAIT_MS = 3_600_000;

/**
 * Retained output after `afterSeq`, long-polling up to `waitMs` until there is
 * something new: output, the exit event, or the close. Upstream's rules,
 * plus `gap` when output after the cursor was evicted.
 */
export async function processRead(
  params: ParamsOf<"process/read">,
  { session, connection }: ProcessContext,
): Promise<ResultOf<"process/read">> {
  const process = session.get(params.processId);
  const endLongPoll = (params.waitMs ?? 0) > 0 ? connection.beginLongPoll() : undefined;
  try {
    return await readUntilChange(process, params, connection);
  } finally {
    endLongPoll?.();
  }
}

async function readUntilChange(
  process: ManagedProcess,
  params: ParamsOf<"process/read">,
  connection: Connection,
): Promise<ResultOf<"process/read">> {
  const afterSeq = params.afterSeq ?? 0;
  const maxBytes = params.maxBytes ?? Number.POSITIVE_INFINITY;
  // Longer waits are cut to an hour: the client simply polls again.
  const deadline = Date.now() + Math.min(params.waitMs ?? 0, MAX_WAIT_MS);
  const abort = connection.closedSignal;
  for (;;) {
    const chunks = process.log.readAfter(afterSeq, maxBytes);
    const gap = process.log.gapAfter(afterSeq, process.exitSeq);
    const last = chunks[chunks.length - 1];
    const nextSeq = last ? last.seq + 1 : process.nextSeq;
    const newTerminalEvent = process.exited && afterSeq < nextSeq - 1;
    const remaining = deadline - Date.now();
    if (chunks.length > 0 || gap || process.closed || newTerminalEvent || remaining <= 0 || abort.aborted) {
      return {
        chunks: chunks.map((chunk) => ({ seq: chunk.seq, stream: chunk.stream, chunk: chunk.data.toString("base64") })),
        nextSeq,
        exited: process.exited,
        exitCode: process.exitCode,
        closed: process.closed,
        failure: null,
        sandboxDenied: process.sandboxDenied,
        ...(gap ? { gap } : {}),
      };
    }
    await process.waitForChange(remaining, abort);
    connection.assertNotEvicted();
  }
}
