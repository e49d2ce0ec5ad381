/**
 * fs/readDirectory: a directory's entries in the order the filesystem lists
 * them, at most 50,000. The listing stops at the first entry past the limit
 * instead of reading the rest of a huge directory only to refuse it.
 */
import type { FsReadDirectoryEntry, ParamsOf, ResultOf } from "@execmux/shared";
import { internalError } from "../../rpc/rpc-error.js";
import type { SessionContext } from "../context.js";
import { forEachEntry } from "./directory-entries.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsPath } from "./fs-path.js";
import { MAX_READ_DIRECTORY_ENTRIES } from "./limits.js";
import { withReplyLane } from "./reply-lane.js";
import { checkDirectRead } from "./sandbox-gate.js";

export async function fsReadDirectory(
  params: ParamsOf<"fs/readDirectory">,
  context: SessionContext,
): Promise<ResultOf<"fs/readDirectory">> {
  const path = fsPath(params.path);
  checkDirectRead(params.sandbox);
  return withReplyLane(context, async () => {
    const entries: FsReadDirectoryEntry[] = [];
    let overLimit = false;
    await mappingFsErrors(() =>
      forEachEntry(path, ({ name, isDirectory, isFile }) => {
        overLimit = entries.length === MAX_READ_DIRECTORY_ENTRIES;
        if (!overLimit) entries.push({ fileName: name, isDirectory, isFile });
        return !overLimit && !context.signal.aborted;
      }),
    );
    if (overLimit) {
      throw internalError(
        `fs/readDirectory returned more than ${MAX_READ_DIRECTORY_ENTRIES} entries; limit is ${MAX_READ_DIRECTORY_ENTRIES}`,
      );
    }
    return { entries };
  });
}
