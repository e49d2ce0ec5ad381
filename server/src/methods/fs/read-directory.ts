/**
 * fs/readDirectory: a directory's entries in the order the filesystem lists
 * them, at most 50,000. The listing stops at the first entry past the limit
 * instead of reading the rest of a huge directory only to refuse it
 * (read-operations.ts).
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { internalError } from "../../errors/rpc-error.js";
import type { SessionContext } from "../context.js";
import { fsPath } from "./fs-path.js";
import { MAX_READ_DIRECTORY_ENTRIES } from "./limits.js";
import { withReplyLane } from "./reply-lane.js";
import { runReadOperation } from "./run-operation.js";
import { mappingFsErrors } from "./fs-error.js";
import { fsConfinement, hiddenFilesFor } from "./sandbox-gate.js";

export async function fsReadDirectory(
  params: ParamsOf<"fs/readDirectory">,
  context: SessionContext,
): Promise<ResultOf<"fs/readDirectory">> {
  const path = fsPath(params.path);
  // In the lane at once (before any await): replies take turns in the order requests came.
  return withReplyLane(context, async () => {
    const confinement = await fsConfinement(params.sandbox, "read", context);
    if (!confinement) await mappingFsErrors(async () => (await hiddenFilesFor(params.sandbox, context))?.checkPath(path));
    const { entries, overLimit } = await runReadOperation(confinement, "directoryListing", [path], context.signal);
    if (overLimit) {
      throw internalError(
        `fs/readDirectory returned more than ${MAX_READ_DIRECTORY_ENTRIES} entries; limit is ${MAX_READ_DIRECTORY_ENTRIES}`,
      );
    }
    return { entries };
  });
}
