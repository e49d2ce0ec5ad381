/**
 * The daemon's own files (ConnectionDeps.hiddenPaths: its secrets, its
 * sockets, its state) are out of reach of every fs call made under a
 * sandbox profile, as they are of every sandboxed process. A confined call
 * cannot see them: its sandbox mounts them away. A call under a profile
 * that reads or writes the whole disk runs in the daemon instead, and checks
 * here what it reached: the canonical path and, for a file, its identity
 * (device and inode, so another hard link to it is refused too). A read
 * checks the descriptor it opened, so no symlink swapped between a check and
 * the open leads there. Refusals are the EACCES a sandbox's mount gives.
 */
import { lstat, realpath, readlink, stat, type FileHandle } from "node:fs/promises";
import { sep } from "node:path";

const within = (path: string, ancestor: string) => ancestor === sep || path === ancestor || path.startsWith(ancestor + sep);

/** What the kernel says when a sandbox denies a path: the call fails as it would confined. */
function denied(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: "EACCES", errno: -13, syscall: "open", path });
}

export class HiddenFiles {
  private constructor(
    /** Canonical paths of the hidden files and directories that exist. */
    private readonly roots: readonly string[],
    /** "dev:ino" of each hidden regular file. */
    private readonly files: ReadonlySet<string>,
  ) {}

  /** Resolved now: a token file rotated by renaming a new one in is a new inode. */
  static async of(paths: readonly string[]): Promise<HiddenFiles> {
    const roots: string[] = [];
    const files = new Set<string>();
    await Promise.all(
      paths.map(async (path) => {
        try {
          const canonical = await realpath(path);
          const stats = await stat(canonical);
          roots.push(canonical);
          if (stats.isFile()) files.add(`${stats.dev}:${stats.ino}`);
        } catch {
          // Missing: nothing to hide.
        }
      }),
    );
    return new HiddenFiles(roots, files);
  }

  private check(canonical: string, identity: { dev: number; ino: number } | undefined, shownAs: string): void {
    if (this.roots.some((root) => within(canonical, root))) throw denied(shownAs);
    if (identity && this.files.has(`${identity.dev}:${identity.ino}`)) throw denied(shownAs);
  }

  /** A descriptor the call opened: where it really leads, and what it is. */
  async checkOpened(file: FileHandle, shownAs: string): Promise<void> {
    const [canonical, stats] = await Promise.all([readlink(`/proc/self/fd/${file.fd}`), file.stat()]);
    this.check(canonical, stats, shownAs);
  }

  /** A path the call is about to look at (metadata, a listing, a walk's root): where it leads now. */
  async checkPath(path: string, followSymlinks = true): Promise<void> {
    let canonical: string;
    try {
      // Without following, the path itself is what is looked at: its directory resolved, its name kept.
      canonical = followSymlinks ? await realpath(path) : await realpathOfParent(path);
    } catch {
      return; // Missing or unreachable: the call itself reports that.
    }
    const identity = await (followSymlinks ? stat : lstat)(canonical).catch(() => undefined);
    this.check(canonical, identity, path);
  }
}

async function realpathOfParent(path: string): Promise<string> {
  const cut = path.lastIndexOf(sep);
  if (cut <= 0) return path;
  return (await realpath(path.slice(0, cut))) + path.slice(cut);
}
