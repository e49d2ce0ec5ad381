import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { ManagedProcess } from "../../process/managed-process.js";
import type { ConnectionPort } from "../connection-port.js";
import { connectionClosed } from "../../errors/rpc-error.js";
import type { ProcessContext } from "../context.js";
import { base64Length } from "../reply-size.js";

const MAX_WAIT_MS = 3_600_000;
/** `{"seq":…,"stream":"stdout","chunk":""}` around each chunk's base64. */
const CHUNK_OVERHEAD_BYTES = 48;
/** `,"timeMs":1700000000000` when the read asked for timestamps. */
const TIME_OVERHEAD_BYTES = 24;

/**
 * Retained output after `afterSeq`, long-polling up to `waitMs` until there is
 * something new: output, the exit event, or the close. Upstream's rules,
 * plus `gap` when output after the cursor was evicted. The output is kept by
 * the process host, which answers each read.
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
  connection: ConnectionPort,
  reply: Pick<ProcessContext, "replyRoomBytes" | "reserveReply" | "holdReplyRoom" | "whenReplyRoom">,
): Promise<ResultOf<"process/read">> {
  const afterSeq = params.afterSeq ?? 0;
  // Longer waits are cut to an hour: the client simply polls again.
  const deadline = Date.now() + Math.min(params.waitMs ?? 0, MAX_WAIT_MS);
  const abort = connection.closedSignal;
  for (;;) {
    // A client that took none of the replies it is owed gets none more built until it takes some: each
    // read would still answer with a chunk (up to 256 KiB), and a burst of reads already read from its
    // socket would pile them up (400 reads grew the daemon past 64 MiB).
    if (reply.replyRoomBytes() <= 0) await reply.whenReplyRoom(CHUNK_OVERHEAD_BYTES);
    if (abort.aborted) throw connectionClosed();
    // A client that does not take its replies gets less (at least one chunk,
    // as with maxBytes), so repeated reads cannot pile up copies of the output.
    const askedBytes = params.maxBytes ?? Number.POSITIVE_INFINITY;
    const maxBytes = Math.min(askedBytes, outputBytesFitting(reply.replyRoomBytes()));
    // The host answers later: until it has, the room this read may take counts as owed, or a
    // burst of reads all sized to the same room would pass the bound many times over.
    const release = reply.holdReplyRoom(base64Length(Math.min(maxBytes, process.outputBytesHeard)));
    const { state, gap, chunks } = await process.read(afterSeq, maxBytes).finally(release);
    connection.assertNotEvicted();
    const last = chunks[chunks.length - 1];
    // Upstream: without maxBytes, the next seq the process will assign
    // (counting its exit and close); with it, where this read stopped. A read
    // the reply budget cut short stopped too: the client reads on from there.
    const cutByBudget = last !== undefined && maxBytes < askedBytes && outputAfter(state, last.seq);
    const nextSeq = (params.maxBytes == null && !cutByBudget) || !last ? state.nextSeq : last.seq + 1;
    const newTerminalEvent = state.exited && afterSeq < nextSeq - 1;
    const remaining = deadline - Date.now();
    if (chunks.length > 0 || gap || state.closed || newTerminalEvent || remaining <= 0 || abort.aborted) {
      const perChunk = CHUNK_OVERHEAD_BYTES + (params.timestamps ? TIME_OVERHEAD_BYTES : 0);
      reply.reserveReply(chunks.reduce((sum, chunk) => sum + base64Length(chunk.data.length) + perChunk, 0));
      return {
        chunks: chunks.map((chunk) => ({
          seq: chunk.seq,
          stream: chunk.stream,
          chunk: chunk.data.toString("base64"),
          // The host keeps, per retained chunk, when it read it (ms after the process started).
          ...(params.timestamps ? { timeMs: state.startEpochMs + chunk.atMs } : {}),
        })),
        nextSeq,
        exited: state.exited,
        exitCode: state.exited ? state.exitCode : null,
        closed: state.closed,
        failure: null,
        sandboxDenied: state.sandboxDenied,
        ...(gap ? { gap } : {}),
      };
    }
    // Anything the host produced after answering comes after the answer: waiting from its nextSeq misses nothing.
    await process.waitForChange(remaining, abort, state.nextSeq);
    connection.assertNotEvicted();
  }
}

/** Whether output (not just the exit or the close) follows seq `after`: seqs are dense, so any that is no terminal event is output. */
function outputAfter(state: { nextSeq: number; exitSeq: number; closedSeq: number; exited: boolean; closed: boolean }, after: number): boolean {
  const inRange = (seq: number) => seq > after && seq < state.nextSeq;
  const terminal = (state.exited && inRange(state.exitSeq) ? 1 : 0) + (state.closed && inRange(state.closedSeq) ? 1 : 0);
  return state.nextSeq - 1 - after > terminal;
}
