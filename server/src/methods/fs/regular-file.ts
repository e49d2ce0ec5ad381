/**
 * Opening a file for reading the way upstream's regular_file module does:
 * non-blocking, so a FIFO without a writer cannot hold the call (or a
 * threadpool thread) forever, and anything but a regular file is refused
 * before a byte is read.
 */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { invalidRequest } from "../../rpc/rpc-error.js";

export async function openRegularFile(path: string): Promise<FileHandle> {
  const file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await file.stat()).isFile()) throw invalidRequest(`path \`${path}\` is not a file`);
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}

/**
 * Reads up to `length` bytes at `position`, fewer only at the end of the
 * file (a single read may return less than asked even before it).
 */
export async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await file.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}
