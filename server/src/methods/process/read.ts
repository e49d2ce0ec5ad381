import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { ManagedProcess } from "../../process/managed-process.js";
import type { Connection } from "../../rpc/connection.js";
import type { ProcessContext } from "../context.js";

const MAX_WAIT_MS = 3_600_000;
/** `{"seq":…,"stream":"stdout","chunk":""}` around each chunk's base64. */
const CHUNK_OVERHEAD_BYTES = 48;
/** `,"timeMs":1700000000000` when the read asked for timestamps. */
const TIME_OVERHEAD_BYTES = 24;

/**
 * Retained output after `afterSeq`, long-polling up to `waitMs` until there is
 * something new: output, the exit event, or the close. Upstream's rules,
 * plus `gap` when output after the cursor was evicted.
 */
export async function processRead(
  params: ParamsOf<"process/read">,
  context: ProcessContext,
): Promise<ResultOf<"process/read">> {
  const process = context.session.get(params.processId);
  const endLongPoll = (params.waitMs ?? 0) > 0 ? context.connection.beginLongPoll() : undefined;
  try {
    return await readUntilChange(process, params, context.connection, context);
  } finally {
    endLongPoll?.();
  }
}

/** Output bytes whose base64 fits in `replyBytes`. */
const outputBytesFitting = (replyBytes: number) => Math.floor((replyBytes * 3) / 4);

async function readUntilChange(
  process: ManagedProcess,
  params: ParamsOf<"process/read">,
  connection: Connection,
  reply: Pick<ProcessContext, "replyRoomBytes" | "reserveReply">,
): Promise<ResultOf<"process/read">> {
  const afterSeq = params.afterSeq ?? 0;
  // Longer waits are cut to an hour: the client simply polls again.
  const deadline = Date.now() + Math.min(params.waitMs ?? 0, MAX_WAIT_MS);
  const abort = connection.closedSignal;
  for (;;) {
    // A client that does not take its replies gets less (at least one chunk,
    // as with maxBytes), so repeated reads cannot pile up copies of the output.
    const askedBytes = params.maxBytes ?? Number.POSITIVE_INFINITY;
    const maxBytes = Math.min(askedBytes, outputBytesFitting(reply.replyRoomBytes()));
    const chunks = process.log.readAfter(afterSeq, maxBytes);
    const gap = process.log.gapAfter(afterSeq, process.exitSeq);
    const last = chunks[chunks.length - 1];
    // Upstream: without maxBytes, the next seq the process will assign
    // (counting its exit and close); with it, where this read stopped. A read
    // the reply budget cut short stopped too: the client reads on from there.
    const cutByBudget = last !== undefined && maxBytes < askedBytes && process.log.firstAfter(last.seq) !== undefined;
    const nextSeq = (params.maxBytes == null && !cutByBudget) || !last ? process.nextSeq : last.seq + 1;
    const newTerminalEvent = process.exited && afterSeq < nextSeq - 1;
    const remaining = deadline - Date.now();
    if (chunks.length > 0 || gap || process.closed || newTerminalEvent || remaining <= 0 || abort.aborted) {
      const perChunk = CHUNK_OVERHEAD_BYTES + (params.timestamps ? TIME_OVERHEAD_BYTES : 0);
      reply.reserveReply(chunks.reduce((sum, chunk) => sum + Math.ceil(chunk.data.length / 3) * 4 + perChunk, 0));
      return {
        chunks: chunks.map((chunk) => ({
          seq: chunk.seq,
          stream: chunk.stream,
          chunk: chunk.data.toString("base64"),
          ...(params.timestamps ? { timeMs: process.log.startedAtMs + chunk.atMs } : {}),
        })),
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
