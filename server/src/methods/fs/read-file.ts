/**
 * fs/readFile: a whole regular file, base64, up to MAX_READ_FILE_BYTES
 * (limits.ts). Reads of large files take turns across the daemon
 * (read-budget.ts) and on the connection (reply-lane.ts), and each waits
 * for room in the connection's reply budget (rpc/reply-budget.ts) and
 * reserves its reply there before it reads: a client that asks for many
 * files and takes none of them holds at most one reply in the daemon.
 */
import type { FileHandle } from "node:fs/promises";
import { ErrorCode, type ParamsOf, type ResultOf } from "@execmux/shared";
import { RpcError, invalidRequest } from "../../rpc/rpc-error.js";
import type { SessionContext } from "../context.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { MAX_READ_BLOCK_BYTES, MAX_READ_FILE_BYTES } from "./limits.js";
import { openForReadNoFollow } from "./no-follow.js";
import { wholeFileReads } from "./read-budget.js";
import { openRegularFile, readAt } from "./regular-file.js";
import { withReplyLane } from "./reply-lane.js";
import { checkFsSandbox } from "./sandbox-gate.js";

const tooLarge = () => invalidRequest(`file is too large to read: limit is ${MAX_READ_FILE_BYTES} bytes`);

/** A file's size as reported is what the daemon reserves; one smaller than this reserves this much. */
const SMALLEST_RESERVATION = 64 * 1024;

/** The reply's size for `fileBytes`: base64 of the file, and the envelope around it. */
const replyBytesFor = (fileBytes: number) => Math.ceil(fileBytes / 3) * 4 + 128;

export async function fsReadFile(params: ParamsOf<"fs/readFile">, context: SessionContext): Promise<ResultOf<"fs/readFile">> {
  const path = fsPath(params.path);
  checkFsSandbox(params.sandbox, "read");
  return withReplyLane(context, () =>
    mappingFsErrors(async () => {
      const file = params.followSymlinks === false ? await openForReadNoFollow(path) : await openRegularFile(path);
      try {
        const { size } = await file.stat();
        if (size > MAX_READ_FILE_BYTES) throw tooLarge();
        const replyBytes = replyBytesFor(Math.max(size, SMALLEST_RESERVATION));
        await context.whenReplyRoom(replyBytes);
        if (context.signal.aborted) throw new RpcError(ErrorCode.ConnectionClosed, "the connection closed");
        context.reserveReply(replyBytes);
        // A file that grows past its reported size (a /proc file reports 0)
        // overshoots its reservation by at most the cap.
        const release = await wholeFileReads.reserve(Math.max(size, SMALLEST_RESERVATION), context.signal);
        try {
          return { dataBase64: (await readToEnd(file)).toString("base64") };
        } finally {
          setImmediate(release);
        }
      } finally {
        await file.close();
      }
    }),
  );
}

/** The file's bytes from its start to its end, refused once past the cap. */
async function readToEnd(file: FileHandle): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    // One byte past the cap is enough to know the file is too large.
    const wanted = Math.min(MAX_READ_BLOCK_BYTES, MAX_READ_FILE_BYTES + 1 - total);
    const chunk = await readAt(file, total, wanted);
    chunks.push(chunk);
    total += chunk.length;
    if (total > MAX_READ_FILE_BYTES) throw tooLarge();
    if (chunk.length < wanted) return Buffer.concat(chunks, total);
  }
}
