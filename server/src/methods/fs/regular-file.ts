/**
 * Opening a file for streamed reads or writes the way upstream's
 * regular_file module does: non-blocking, so a FIFO without a writer (or
 * reader) cannot hold the call (or a threadpool thread) forever, and
 * anything but a regular file is refused before a byte is read or written.
 */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { invalidRequest } from "../../errors/rpc-error.js";

export async function openRegularFile(path: string): Promise<FileHandle> {
  return refuseAllButFiles(path, await open(path, constants.O_RDONLY | constants.O_NONBLOCK));
}

/**
 * Opening for fs/writeBlock (fs/open mode `replace`), as upstream 0.171:
 * created if missing (mode 0666 less the umask; through a dangling symlink
 * too), else truncated in place, keeping its mode and inode. Non-blocking
 * too: a FIFO without a reader is ENXIO at once; a device is refused.
 */
export async function openRegularFileForReplace(path: string): Promise<FileHandle> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK;
  return refuseAllButFiles(path, await open(path, flags, 0o666));
}

async function refuseAllButFiles(path: string, file: FileHandle): Promise<FileHandle> {
  try {
    if (!(await file.stat()).isFile()) throw invalidRequest(`path \`${path}\` is not a file`);
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}

/** Writes all of `data` at `position`. */
export async function writeAt(file: FileHandle, position: number, data: Buffer): Promise<void> {
  let written = 0;
  while (written < data.length) {
    const { bytesWritten } = await file.write(data, written, data.length - written, position + written);
    written += bytesWritten;
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
