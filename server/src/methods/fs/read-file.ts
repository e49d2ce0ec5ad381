/**
 * fs/readFile: a whole regular file, base64, up to MAX_READ_FILE_BYTES
 * (limits.ts). Reads of large files take turns across the daemon
 * (read-budget.ts) and on the connection (reply-lane.ts).
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import type { FileHandle } from "node:fs/promises";
import { invalidRequest } from "../../rpc/rpc-error.js";
import type { SessionContext } from "../context.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { MAX_READ_BLOCK_BYTES, MAX_READ_FILE_BYTES } from "./limits.js";
import { openForReadNoFollow } from "./no-follow.js";
import { wholeFileReads } from "./read-budget.js";
import { openRegularFile, readAt } from "./regular-file.js";
import { withReplyLane } from "./reply-lane.js";
import { checkDirectRead } from "./sandbox-gate.js";

const tooLarge = () => invalidRequest(`file is too large to read: limit is ${MAX_READ_FILE_BYTES} bytes`);

/** A file's size as reported is what the daemon reserves; one smaller than this reserves this much. */
const SMALLEST_RESERVATION = 64 * 1024;

export async function fsReadFile(params: ParamsOf<"fs/readFile">, context: SessionContext): Promise<ResultOf<"fs/readFile">> {
  const path = fsPath(params.path);
  checkDirectRead(params.sandbox);
  return withReplyLane(context, () =>
    mappingFsErrors(async () => {
      const file = params.followSymlinks === false ? await openForReadNoFollow(path) : await openRegularFile(path);
      try {
        const { size } = await file.stat();
        if (size > MAX_READ_FILE_BYTES) throw tooLarge();
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
