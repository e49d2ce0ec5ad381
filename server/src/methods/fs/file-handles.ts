/**
 * A connection's open fs/open handles, for reading or (mode `replace`) writing:
 * at most 128, ids of at most 32 bytes, read at any offset in any order, kept
 * open at EOF until fs/close; a read error closes the handle. The handle
 * holds the file open, so a file replaced or removed meanwhile keeps reading
 * as it was. Closed with the connection. Each open file is a descriptor
 * charged to the connection's client (budgets/descriptor-budget.ts).
 */
import type { FileHandle } from "node:fs/promises";
import type { Disposable } from "../../rpc/connection-resources.js";
import { invalidRequest } from "../../errors/rpc-error.js";
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

interface OpenHandle {
  /** Undefined while the file is being opened: the id and the slot are taken from the start. */
  file: FileHandle | undefined;
  /** Gives the descriptor back to the client's budget: once the file is closed. */
  readonly release: () => void;
}

export class FileHandles implements Disposable {
  private readonly handles = new Map<string, OpenHandle>();
  private disposed = false;

  /** `charge` takes one descriptor from the client's budget (throws -32011 past it) and returns its release. */
  constructor(private readonly charge: () => () => void) {}

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
    const handle: OpenHandle = { file: undefined, release: this.charge() };
    this.handles.set(handleId, handle);
    let file: FileHandle;
    try {
      file = await openFile();
    } catch (error) {
      if (this.handles.get(handleId) === handle) this.handles.delete(handleId);
      handle.release();
      throw error;
    }
    // A close (of the id or the connection) that came while the file was opening wins.
    if (!this.disposed && this.handles.get(handleId) === handle) handle.file = file;
    else await file.close().finally(handle.release);
  }

  /** The open file behind `handleId`; -32004 when there is none (or it is still opening). */
  get(handleId: string): FileHandle {
    const file = this.handles.get(handleId)?.file;
    if (!file) throw notFound(`unknown file handle \`${handleId}\``);
    return file;
  }

  /** Idempotent: closing an unknown id succeeds. */
  async close(handleId: string): Promise<void> {
    const handle = this.handles.get(handleId);
    this.handles.delete(handleId);
    // One still opening is released when its open finishes (above).
    if (handle?.file) await handle.file.close().finally(handle.release);
  }

  dispose(): void {
    this.disposed = true;
    for (const handle of this.handles.values()) {
      if (handle.file) void handle.file.close().catch(() => undefined).finally(handle.release);
    }
    this.handles.clear();
  }
}

export const fileHandlesOf = (context: SessionContext) =>
  context.resources.get(FILE_HANDLES, () => {
    const { connection } = context;
    return new FileHandles(() => connection.deps.budgets.descriptors.take(connection.client, "file handle"));
  });
