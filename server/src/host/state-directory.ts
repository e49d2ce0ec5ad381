/**
 * Where a persistent process host's socket lives: a private directory
 * (0700, this user's), one socket per listen address, so the same
 * `execmux serve` command finds its host again after a crash or an upgrade.
 */
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The state directory: the configured one, or $XDG_RUNTIME_DIR/execmux, or
 * the temporary directory's execmux-UID. Made 0700 if missing; one that is
 * not a directory of this user closed to others is refused (someone else
 * could have planted a socket there).
 */
export function stateDirectory(configured: string): string {
  const uid = process.getuid?.() ?? 0;
  const directory = stateDirectoryPath(configured);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const found = lstatSync(directory);
  if (!found.isDirectory() || found.uid !== uid || (found.mode & 0o077) !== 0) {
    throw new Error(`${directory} must be a directory of user ${uid} that nobody else can open (mode 0700); choose another with --state-directory`);
  }
  return directory;
}

/** Where the state directory is, made or not. */
export function stateDirectoryPath(configured: string): string {
  return configured || (process.env.XDG_RUNTIME_DIR ? join(process.env.XDG_RUNTIME_DIR, "execmux") : join(tmpdir(), `execmux-${process.getuid?.() ?? 0}`));
}

/** The host socket of a listen address. */
export function hostSocketPath(directory: string, listen: string): string {
  return join(directory, `host-${createHash("sha256").update(listen).digest("hex").slice(0, 16)}.sock`);
}
