/**
 * The fs/* reads that a short-lived helper can make, as stateless functions
 * of plain arguments: run in the daemon under a profile that reads the whole
 * disk (or no sandbox), and inside the sandbox (run-operation.ts) under one
 * that denies something, with the same results and errors either way.
 *
 * Each takes the connection's AbortSignal last; inside a helper there is
 * none (the helper is killed instead).
 */
import type { Stats } from "node:fs";
import { realpath, type FileHandle } from "node:fs/promises";
import type { FsGetMetadataResult, FsReadDirectoryEntry } from "@execmux/shared";
import { invalidRequest } from "../../errors/rpc-error.js";
import { forEachEntry } from "./directory-entries.js";
import { MAX_READ_BLOCK_BYTES, MAX_READ_DIRECTORY_ENTRIES, MAX_READ_FILE_BYTES } from "./limits.js";
import { metadataNoFollow, openForReadNoFollow } from "./no-follow.js";
import { pathMetadata } from "./path-metadata.js";
import { openRegularFile, readAt } from "./regular-file.js";

export const tooLarge = () => invalidRequest(`file is too large to read: limit is ${MAX_READ_FILE_BYTES} bytes`);

/** A regular file opened for reading as fs/readFile opens it: its size is checked against the cap before reading. */
export async function openForReadFile(path: string, followSymlinks: boolean): Promise<{ file: FileHandle; size: number }> {
  const file = followSymlinks ? await openRegularFile(path) : await openForReadNoFollow(path);
  const { size } = await file.stat();
  if (size > MAX_READ_FILE_BYTES) {
    await file.close();
    throw tooLarge();
  }
  return { file, size };
}

/** The file's bytes from its start to its end, refused once past the cap. */
export async function readToEnd(file: FileHandle): Promise<Buffer> {
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

/** fs/readFile in one step (a confined read: the daemon reserves the cap for it, not knowing the size). */
export async function readFileBytes(path: string, followSymlinks: boolean, _signal: AbortSignal | undefined): Promise<Buffer> {
  const { file } = await openForReadFile(path, followSymlinks);
  try {
    return await readToEnd(file);
  } finally {
    await file.close();
  }
}

/** Whole Unix milliseconds, 0 when unknown or before 1970, as upstream reports times. */
const unixMs = (ms: number) => (Number.isFinite(ms) && ms > 0 ? Math.floor(ms) : 0);

function describe(stats: Stats, isSymlink: boolean): FsGetMetadataResult {
  return {
    isDirectory: stats.isDirectory(),
    isFile: stats.isFile(),
    isSymlink,
    size: stats.size,
    createdAtMs: unixMs(stats.birthtimeMs),
    modifiedAtMs: unixMs(stats.mtimeMs),
  };
}

/** fs/getMetadata: `isSymlink` for the path itself, the rest for its target. */
export async function metadataOf(path: string, followSymlinks: boolean, _signal: AbortSignal | undefined): Promise<FsGetMetadataResult> {
  if (!followSymlinks) return describe(await metadataNoFollow(path), false);
  const { stats, isSymlink } = await pathMetadata(path);
  return describe(stats, isSymlink);
}

/** fs/canonicalize: the path with every symlink, `.` and `..` resolved. */
export async function canonicalPath(path: string, _signal: AbortSignal | undefined): Promise<string> {
  return realpath(path);
}

export interface DirectoryListing {
  readonly entries: FsReadDirectoryEntry[];
  /** More than MAX_READ_DIRECTORY_ENTRIES: the listing stopped there. */
  readonly overLimit: boolean;
}

/** fs/readDirectory's entries, in the order the filesystem lists them, stopping past the limit. */
export async function directoryListing(path: string, signal: AbortSignal | undefined): Promise<DirectoryListing> {
  const entries: FsReadDirectoryEntry[] = [];
  let overLimit = false;
  await forEachEntry(path, ({ name, isDirectory, isFile }) => {
    overLimit = entries.length === MAX_READ_DIRECTORY_ENTRIES;
    if (!overLimit) entries.push({ fileName: name, isDirectory, isFile });
    return !overLimit && !signal?.aborted;
  });
  return { entries, overLimit };
}
