/** What fs/walk answers, and the reply-size estimate that bounds it (upstream's). */
import type { FsWalkResult } from "@execmux/shared";
// Not the package's index: a walk also runs in the confined helper (walk-tree.ts), which must not load the schemas.
import { pathToFileUri } from "@execmux/shared/path-uri";
import { fsError } from "./fs-error.js";
import { MAX_WALK_RESPONSE_BYTES, WALK_RESPONSE_ITEM_OVERHEAD_BYTES } from "./limits.js";

/** Thrown when the walk is over: a limit or the size estimate was reached. */
export class WalkFull extends Error {}

export class WalkOutcome {
  readonly result: FsWalkResult = { entries: [], errors: [], truncated: false };
  private responseBytes = 0;

  /** Charges an item to the reply's size estimate; a full reply ends the walk. */
  private reserve(contentBytes: number): void {
    const total = this.responseBytes + contentBytes + WALK_RESPONSE_ITEM_OVERHEAD_BYTES;
    if (total > MAX_WALK_RESPONSE_BYTES) this.stop();
    this.responseBytes = total;
  }

  addEntry(path: string, kind: "directory" | "file"): void {
    const uri = pathToFileUri(path);
    this.reserve(uri.length);
    this.result.entries.push({ path: uri, kind });
  }

  addError(path: string, error: unknown): void {
    const uri = pathToFileUri(path);
    const { message } = fsError(error);
    this.reserve(uri.length + Buffer.byteLength(message));
    this.result.errors.push({ path: uri, message });
  }

  stop(): never {
    this.result.truncated = true;
    throw new WalkFull();
  }
}

