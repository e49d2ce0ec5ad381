/**
 * fs/readFile: a whole regular file, base64, up to MAX_READ_FILE_BYTES
 * (limits.ts). Reads of large files take turns across the daemon
 * (read-budget.ts) and on the connection (reply-lane.ts), and each waits
 * for room in the connection's reply budget (rpc/reply-budget.ts) and
 * reserves its reply there before it reads: a client that asks for many
 * files and takes none of them holds at most one reply in the daemon.
 * Under a profile that does not read the whole disk, the read runs inside
 * the sandbox (read-operations.ts).
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { connectionClosed } from "../../errors/rpc-error.js";
import type { SessionContext } from "../context.js";
import { base64Length } from "../reply-size.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { MAX_READ_FILE_BYTES } from "./limits.js";
import { openForReadFile, readToEnd } from "./read-operations.js";
import { wholeFileReads } from "./read-budget.js";
import { withReplyLane } from "./reply-lane.js";
import { runReadOperation } from "./run-operation.js";
import { fsConfinement, hiddenFilesFor } from "./sandbox-gate.js";

/** A file's size as reported is what the daemon reserves; one smaller than this reserves this much. */
const SMALLEST_RESERVATION = 64 * 1024;

/** The reply's size for `fileBytes`: base64 of the file, and the envelope around it. */
const replyBytesFor = (fileBytes: number) => base64Length(fileBytes) + 128;

/** Waits until the connection's reply budget has room for `replyBytes`, then holds it for this reply. */
async function reserveReplyRoom(context: SessionContext, replyBytes: number): Promise<void> {
  await context.whenReplyRoom(replyBytes);
  if (context.signal.aborted) throw connectionClosed();
  context.reserveReply(replyBytes);
}

export async function fsReadFile(params: ParamsOf<"fs/readFile">, context: SessionContext): Promise<ResultOf<"fs/readFile">> {
  const path = fsPath(params.path);
  const followSymlinks = params.followSymlinks !== false;
  // In the lane at once (before any await): replies take turns in the order requests came.
  return withReplyLane(context, async () => {
    const confinement = await fsConfinement(params.sandbox, "read", context);
    if (confinement) {
      // The size is only known inside: the cap is reserved.
      await reserveReplyRoom(context, replyBytesFor(MAX_READ_FILE_BYTES));
      const release = await wholeFileReads.reserve(MAX_READ_FILE_BYTES, context.signal);
      try {
        const bytes = await runReadOperation(confinement, "readFileBytes", [path, followSymlinks], context.signal);
        return { dataBase64: bytes.toString("base64") };
      } finally {
        setImmediate(release);
      }
    }
    const hidden = await hiddenFilesFor(params.sandbox, context);
    return mappingFsErrors(async () => {
      const { file, size } = await openForReadFile(path, followSymlinks);
      try {
        await hidden?.checkOpened(file, path);
        await reserveReplyRoom(context, replyBytesFor(Math.max(size, SMALLEST_RESERVATION)));
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
    });
  });
}
