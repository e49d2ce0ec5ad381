/**
 * Directory-relative file operations without openat(2), which Node lacks:
 * a directory held open as a descriptor is named `/proc/self/fd/N`, and
 * `/proc/self/fd/N/name` resolves `name` inside that very directory, however
 * its path changes meanwhile. Walking a path one component at a time this
 * way, with O_NOFOLLOW at each step, is how upstream's no-follow operations
 * and Rust's remove_dir_all refuse symlinks without a check-then-use race.
 */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";

/**
 * Linux's O_PATH (the value on x86-64, arm64 and the other architectures Node
 * builds for; Node does not export it): a descriptor that names a directory
 * without reading it, so a directory the daemon may search but not list
 * (mode 0711) can still be walked through.
 */
const O_PATH = 0o10000000;
const DIRECTORY_STEP = O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** The directory `directory` holds open, wherever it is now. */
export const descriptorPath = (directory: FileHandle) => `/proc/self/fd/${directory.fd}`;

/** `name` inside the directory `directory` holds open. */
export const inDirectory = (directory: FileHandle, name: string) => `${descriptorPath(directory)}/${name}`;

/** The path's components: `/a/b/c` -> `["a", "b", "c"]`, `/` -> `[]`. */
export const componentsOf = (path: string) => path.split("/").filter((component) => component !== "");

/** Opens the root directory for a walk down from it. */
export const openRoot = () => open("/", DIRECTORY_STEP);

/** Opens a directory by its path, following symlinks on the way (and at the end). */
export const openDirectory = (path: string) => open(path, O_PATH | constants.O_DIRECTORY);

/**
 * Opens `name` inside `directory`, refusing a symlink: a symlink or a file
 * fails with ENOTDIR, a missing entry with ENOENT, as upstream reports them.
 */
export const openChildDirectory = (directory: FileHandle, name: string) => open(inDirectory(directory, name), DIRECTORY_STEP);

/**
 * Opens each of `names` in turn below `start` (which it takes over), closing
 * the one before; resolves with the last, which the caller closes.
 */
export async function descend(start: FileHandle, names: readonly string[]): Promise<FileHandle> {
  let directory = start;
  try {
    for (const name of names) {
      const next = await openChildDirectory(directory, name);
      await directory.close();
      directory = next;
    }
    return directory;
  } catch (error) {
    await directory.close();
    throw error;
  }
}

/** Runs `act` with the directory that holds the last component of `path` open, never following a symlink on the way. */
export async function withParentDirectory<T>(
  path: string,
  act: (parent: FileHandle, name: string | undefined) => Promise<T>,
): Promise<T> {
  const names = componentsOf(path);
  const name = names.pop();
  const parent = await descend(await openRoot(), names);
  try {
    return await act(parent, name);
  } finally {
    await parent.close();
  }
}
