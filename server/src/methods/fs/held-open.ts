/**
 * The half of a confined fs/open that runs inside the sandbox (confined-open.ts
 * has the other): opens the file as a direct fs/open would, under the
 * sandbox's view of the disk (a denied path is EACCES, a write outside the
 * writable roots EROFS), keeps it open while the helper is held, and says
 * which descriptor and which file it is.
 */
import type { FileHandle } from "node:fs/promises";
import { openRegularFile, openRegularFileForReplace } from "./regular-file.js";

/** Referenced until the helper exits: a FileHandle collected while open would be closed under the daemon. */
const held: FileHandle[] = [];

export interface HeldFile {
  /** This process's pid in its own namespace, for the daemon to find it by. */
  readonly pid: number;
  readonly fd: number;
  /** The file's identity, which what the daemon opens at /proc/<pid>/fd/<fd> must have. */
  readonly dev: string;
  readonly ino: string;
}

export async function openHeld(path: string, replace: boolean, _signal: AbortSignal | undefined): Promise<HeldFile> {
  const file = replace ? await openRegularFileForReplace(path) : await openRegularFile(path);
  held.push(file);
  const stats = await file.stat({ bigint: true });
  return { pid: process.pid, fd: file.fd, dev: stats.dev.toString(), ino: stats.ino.toString() };
}
