/**
 * The pieces of fs/copy, as upstream's (std::fs::copy and copy_dir_recursive):
 * a regular file's bytes and permission bits, a symlink as a symlink with
 * the same target, a directory's tree (other kinds of entries inside it are
 * skipped). Files are copied a chunk per step, so a large one never holds
 * the event loop, and a copy stops when its connection closes.
 */
import { constants } from "node:fs";
import { open, opendir, readlink, realpath, stat, symlink } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { connectionClosed, invalidRequest } from "../../errors/rpc-error.js";
import { createDirectoryAll } from "./create-directory-all.js";
import { entryPath } from "./directory-entries.js";
import { refuseHardLinkedFile } from "./hard-links.js";
import { COPY_CHUNK_BYTES } from "./limits.js";
import { writeAt } from "./regular-file.js";

const { O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_WRONLY } = constants;

export const unsupportedKind = () => invalidRequest("fs/copy only supports regular files, directories, and symlinks");

const checkOpen = (signal: AbortSignal) => {
  if (signal.aborted) throw connectionClosed();
};

/** `refuseHardLinked`: under a sandbox, an existing destination with other links is not written (write-operations.ts). */
export async function copyRegularFile(source: string, destination: string, signal: AbortSignal, refuseHardLinked = false): Promise<void> {
  // Non-blocking and not through a symlink: the entry was a regular file
  // when looked at, and whatever replaced it since is refused, not waited on.
  const input = await open(source, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    const sourceStats = await input.stat();
    if (!sourceStats.isFile()) throw unsupportedKind();
    const mode = sourceStats.mode & 0o7777;
    const output = await open(destination, O_WRONLY | O_CREAT | O_NONBLOCK, mode);
    try {
      const destinationStats = await output.stat();
      // Upstream truncates a file copied onto itself, losing it; execmux leaves it as it is.
      if (destinationStats.dev === sourceStats.dev && destinationStats.ino === sourceStats.ino) return;
      if (refuseHardLinked) refuseHardLinkedFile(destination, destinationStats);
      await output.truncate(0);
      const buffer = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
      for (let position = 0; ; ) {
        checkOpen(signal);
        const { bytesRead } = await input.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0) break;
        await writeAt(output, position, buffer.subarray(0, bytesRead));
        position += bytesRead;
      }
      if (destinationStats.isFile()) await output.chmod(mode);
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}

/** A new symlink with the same target bytes. */
export async function copySymlink(source: string, destination: string): Promise<void> {
  await symlink(await readlink(source, { encoding: "buffer" }), destination);
}

/** Merges the tree at `source` into `destination` (made if missing), in the order the filesystem lists entries. */
export async function copyDirectory(source: string, destination: string, signal: AbortSignal, refuseHardLinked = false): Promise<void> {
  await createDirectoryAll(destination);
  for await (const dirent of await opendir(source)) {
    checkOpen(signal);
    const from = entryPath(source, dirent.name);
    const to = entryPath(destination, dirent.name);
    if (dirent.isDirectory()) await copyDirectory(from, to, signal, refuseHardLinked);
    else if (dirent.isFile()) await copyRegularFile(from, to, signal, refuseHardLinked);
    else if (dirent.isSymbolicLink()) await copySymlink(from, to);
  }
}

const exists = (path: string) => stat(path).then(() => true, () => false);

/**
 * `path` with symlinks resolved as far as it exists, the rest appended as
 * written (upstream's resolve_existing_path): where a copy would land.
 */
async function resolveExistingPath(path: string): Promise<string> {
  const missing: string[] = [];
  let existing = path;
  while (existing !== "/" && !(await exists(existing))) {
    missing.unshift(basename(existing));
    existing = dirname(existing);
  }
  const resolved = await realpath(existing);
  return [resolved === "/" ? "" : resolved, ...missing].join("/") || "/";
}

/** Whether copying the directory `source` to `destination` would copy it into itself. */
export async function landsInside(source: string, destination: string): Promise<boolean> {
  const canonicalSource = await realpath(source);
  const landing = await resolveExistingPath(destination);
  return landing === canonicalSource || landing.startsWith(canonicalSource === "/" ? "/" : `${canonicalSource}/`);
}
