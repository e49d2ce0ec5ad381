/**
 * fs/writeBlock (capability fileWriteStreaming): writes a chunk at an
 * offset of a handle fs/open opened with mode `replace`; any offset, in any
 * order (a gap reads as zeros). Upstream's checks, in upstream's order: the
 * handle id's length, the chunk's (1..=1 MiB), then the handle. A failed
 * write leaves the handle open (a failed read closes it). A connection's
 * blocks are written one at a time, in the order they came, with a bound on
 * the bytes waiting.
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { Disposable } from "../../rpc/connection-resources.js";
import { invalidRequest, limitExceeded } from "../../errors/rpc-error.js";
import type { SessionContext } from "../context.js";
import { checkHandleId, fileHandlesOf } from "./file-handles.js";
import { fsError } from "./fs-error.js";
import { MAX_QUEUED_WRITE_BLOCK_BYTES, MAX_WRITE_BLOCK_BYTES } from "./limits.js";
import { writeAt } from "./regular-file.js";

const WRITE_QUEUE = Symbol("fs/writeBlock queue");

/** A connection's writes, in arrival order, and the bytes still waiting among them. */
export class WriteQueue implements Disposable {
  private tail: Promise<unknown> = Promise.resolve();
  private queuedBytes = 0;

  constructor(private readonly maxQueuedBytes = MAX_QUEUED_WRITE_BLOCK_BYTES) {}

  /** Runs `write` after every earlier one; refused (-32011) when the bytes waiting would pass the bound. */
  run<T>(bytes: number, write: () => Promise<T>): Promise<T> {
    if (this.queuedBytes + bytes > this.maxQueuedBytes) {
      throw limitExceeded(
        "queuedWriteBlockBytes",
        `fs/writeBlock: ${this.queuedBytes} bytes of this connection are still waiting to be written (at most ${this.maxQueuedBytes}); wait for their replies`,
      );
    }
    this.queuedBytes += bytes;
    const result = this.tail.then(write).finally(() => (this.queuedBytes -= bytes));
    this.tail = result.catch(() => undefined);
    return result;
  }

  dispose(): void {
    // Writes in progress finish against their handles; the handles close with the connection.
  }
}

export async function fsWriteBlock(params: ParamsOf<"fs/writeBlock">, context: SessionContext): Promise<ResultOf<"fs/writeBlock">> {
  checkHandleId(params.handleId);
  const chunk = Buffer.from(params.chunk, "base64");
  if (chunk.length < 1 || chunk.length > MAX_WRITE_BLOCK_BYTES) {
    throw invalidRequest(`file write block length must be between 1 and ${MAX_WRITE_BLOCK_BYTES}`);
  }
  const queue = context.resources.get(WRITE_QUEUE, () => new WriteQueue());
  const handles = fileHandlesOf(context);
  await queue.run(chunk.length, async () => {
    // Looked up once it is this block's turn: a close that came before it wins.
    const file = handles.get(params.handleId);
    try {
      await writeAt(file, params.offset, chunk);
    } catch (error) {
      throw fsError(error);
    }
  });
  return {};
}
