/**
 * A connection's open fs/open handles, for reading or (mode `replace`) writing:
 * at most 128, ids of at most 32 bytes, read at any offset in any order, kept
 * open at EOF until fs/close; a read error closes the handle. The handle
 * holds the file open, so a file replaced or removed meanwhile keeps reading
 * as it was. Closed with the connection.
 */
import type { FileHandle } from "node:fs/promises";
import type { Disposable } from "../../rpc/connection-resources.js";
import { invalidRequest } from "../../rpc/rpc-error.js";
import type { SessionContext } from "../context.js";
import { notFound } from "./fs-error.js";
import { MAX_FILE_HANDLE_ID_BYTES, MAX_OPEN_FILE_HANDLES } from "./limits.js";

const FILE_HANDLES = Symbol("fs/open handles");

/** Throws upstream's -32600 for an id longer than 32 UTF-8 bytes. */
export function checkHandleId(handleId: string): void {
  if (Buffer.byteLength(handleId, "utf8") > MAX_FILE_HANDLE_ID_BYTES) {
    throw invalidRequest(`file handle ID must not exceed ${MAX_FILE_HANDLE_ID_BYTES} bytes`);
  }
}

export class FileHandles implements Disposable {
  /** Undefined while the file is being opened: the id and the slot are taken from the start. */
  private readonly handles = new Map<string, FileHandle | undefined>();
  private disposed = false;

  /**
   * Takes the id and a slot before anything is opened (so two racing opens
   * of one id cannot both succeed), then stores what `openFile` opened, or
   * frees both when it fails.
   */
  async open(handleId: string, openFile: () => Promise<FileHandle>): Promise<void> {
    if (this.handles.has(handleId)) throw invalidRequest(`file handle \`${handleId}\` already exists`);
    if (this.handles.size >= MAX_OPEN_FILE_HANDLES) {
      throw invalidRequest(`at most ${MAX_OPEN_FILE_HANDLES} file handles may be open per connection`);
    }
    this.handles.set(handleId, undefined);
    let file: FileHandle;
    try {
      file = await openFile();
    } catch (error) {
      this.handles.delete(handleId);
      throw error;
    }
    // A close (of the id or the connection) that came while the file was opening wins.
    if (!this.disposed && this.handles.has(handleId)) this.handles.set(handleId, file);
    else await file.close();
  }

  /** The open file behind `handleId`; -32004 when there is none (or it is still opening). */
  get(handleId: string): FileHandle {
    const file = this.handles.get(handleId);
    if (!file) throw notFound(`unknown file handle \`${handleId}\``);
    return file;
  }

  /** Idempotent: closing an unknown id succeeds. */
  async close(handleId: string): Promise<void> {
    const file = this.handles.get(handleId);
    this.handles.delete(handleId);
    await file?.close();
  }

  dispose(): void {
    this.disposed = true;
    for (const file of this.handles.values()) void file?.close().catch(() => undefined);
    this.handles.clear();
  }
}

export const fileHandlesOf = (context: SessionContext) => context.resources.get(FILE_HANDLES, () => new FileHandles());
