/**
 * The remote working directory of `exec` and `mcp`. For a daemon on this
 * machine the caller's own directory is the one they mean (`execmux exec --
 * make` where they stand); a remote machine has no such directory, so there
 * it is `/`. A relative `--cwd` is resolved against that default.
 */
import { posix } from "node:path";
import { isLoopback } from "../loopback.js";
import { CommandError } from "./command-error.js";

export function isLoopbackUrl(url: string): boolean {
  try {
    return isLoopback(new URL(url).hostname.replace(/^\[(.*)\]$/, "$1"));
  } catch {
    return false;
  }
}

/** This process's directory; a clear error if it was deleted under us. */
function currentDirectory(): string {
  try {
    return process.cwd();
  } catch {
    throw new CommandError("this shell's current directory no longer exists; cd elsewhere or pass --cwd DIR", 1);
  }
}

export function defaultRemoteCwd(url: string, localCwd?: string): string {
  return isLoopbackUrl(url) ? (localCwd ?? currentDirectory()) : "/";
}

/** `given` (absolute, relative or a file:// URI) against `base`, as the daemon should get it. */
export function resolveRemotePath(base: string, given: string): string {
  return given.startsWith("file:") ? given : posix.resolve(base, given);
}

/** `--cwd` (or its absence) as the daemon should get it. */
export function remoteCwd(url: string, given: string | undefined, localCwd?: string): string {
  if (given !== undefined && (given.startsWith("file:") || given.startsWith("/"))) return given;
  const base = defaultRemoteCwd(url, localCwd);
  return given === undefined ? base : resolveRemotePath(base, given);
}
