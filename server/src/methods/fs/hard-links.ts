/**
 * Under a sandbox, a regular file with more than one link is not written:
 * another of its names may lie outside the writable roots, and writing the
 * file changes that one too. Such a link cannot be made inside the sandbox
 * (the writable roots are mounts of their own: EXDEV), but someone outside
 * may have planted one in the project. Checked on the open descriptor,
 * before anything is truncated. Upstream writes such a file.
 */
import type { Stats } from "node:fs";
import { invalidRequest } from "../../errors/rpc-error.js";

export function refuseHardLinkedFile(path: string, stats: Stats): void {
  if (stats.isFile() && stats.nlink > 1) {
    throw invalidRequest(`refusing to write \`${path}\` under a sandbox: it has ${stats.nlink} hard links, which may lie outside the writable roots`);
  }
}
