/**
 * fs/readBlock: up to `len` bytes of an open handle at `offset`; `eof` when
 * fewer came back. Any offset, in any order, again and again; reading at or
 * past the end is an empty block with `eof`, and the handle stays open.
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidRequest } from "../../errors/rpc-error.js";
import type { SessionContext } from "../context.js";
import { checkHandleId, fileHandlesOf } from "./file-handles.js";
import { fsError } from "./fs-error.js";
import { MAX_READ_BLOCK_BYTES } from "./limits.js";
import { readAt } from "./regular-file.js";
import { withReplyLane } from "./reply-lane.js";

export async function fsReadBlock(params: ParamsOf<"fs/readBlock">, context: SessionContext): Promise<ResultOf<"fs/readBlock">> {
  checkHandleId(params.handleId);
  if (params.len < 1 || params.len > MAX_READ_BLOCK_BYTES) {
    throw invalidRequest(`file read block length must be between 1 and ${MAX_READ_BLOCK_BYTES}`);
  }
  const handles = fileHandlesOf(context);
  return withReplyLane(context, async () => {
    // Looked up once it is this request's turn: a close queued before it wins.
    const file = handles.get(params.handleId);
    let chunk: Buffer;
    try {
      chunk = await readAt(file, params.offset, params.len);
    } catch (error) {
      // A handle that failed once is closed, as upstream's are.
      await handles.close(params.handleId);
      throw fsError(error);
    }
    return { chunk: chunk.toString("base64"), eof: chunk.length < params.len };
  });
}
