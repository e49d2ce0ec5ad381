/** fs/walk's metadata lookups, started a few names ahead of their use. */
import { entryPath } from "./directory-entries.js";
import { pathMetadata, type PathMetadata } from "./path-metadata.js";

/** Metadata lookups in flight at once: enough to keep the threadpool busy. */
const LOOKAHEAD = 16;

/**
 * The metadata of a directory's names, looked up a few names ahead of the
 * walk so the lookups overlap, yet used strictly in order; never more than
 * the entries the walk may still examine.
 */
export class MetadataLookahead {
  private readonly pending: Promise<PathMetadata | Error>[] = [];

  constructor(
    private readonly directory: string,
    private readonly names: readonly string[],
  ) {}

  get(index: number, stillExaminable: number): Promise<PathMetadata | Error> {
    const end = Math.min(this.names.length, index + 1 + Math.min(LOOKAHEAD - 1, stillExaminable));
    for (let next = this.pending.length; next < end; next++) {
      const path = entryPath(this.directory, this.names[next]!);
      this.pending.push(pathMetadata(path).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))));
    }
    const lookup = this.pending[index]!;
    // Drop what was used, so a directory's lookups do not pile up in memory.
    delete this.pending[index];
    return lookup;
  }
}

