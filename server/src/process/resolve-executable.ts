import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { SpawnError } from "./spawn-error.js";

/** execvp's fallback when the environment has no PATH. */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/** "ok", or why execve would refuse the path: absent (ENOENT, or ENOTDIR under a file) or not executable (EACCES). */
function executableState(path: string): "ok" | "ENOENT" | "ENOTDIR" | "EACCES" {
  try {
    // Most PATH entries lack the program: no exception for those (making one costs more than the stat).
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined) return "ENOENT";
    if (!stats.isFile()) return "EACCES";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOTDIR" ? "ENOTDIR" : "ENOENT";
  }
  try {
    accessSync(path, constants.X_OK);
    return "ok";
  } catch {
    return "EACCES";
  }
}

/**
 * Finds the program the way execvp would, with the child's PATH. Done before
 * forking so that "no such program" is a start error, not a child that prints
 * "exec failed" and exits 127 (what a PTY child would give, pty-wrapper.ts).
 */
export function resolveExecutable(file: string, cwd: string, pathVariable: string | undefined): string {
  if (file.includes("/")) {
    const candidate = isAbsolute(file) ? file : resolve(cwd, file);
    const state = executableState(candidate);
    if (state === "ok") return candidate;
    throw new SpawnError(state === "EACCES" ? `spawn ${file} EACCES: not an executable file` : `spawn ${file} ${state}: no such file`, state);
  }
  // As execvp: a match without execute permission is remembered, and reported if nothing better is found.
  let denied = false;
  for (const directory of (pathVariable ?? DEFAULT_PATH).split(delimiter)) {
    const candidate = join(directory === "" ? cwd : resolve(cwd, directory), file);
    const state = executableState(candidate);
    if (state === "ok") return candidate;
    denied ||= state === "EACCES";
  }
  throw new SpawnError(denied ? `spawn ${file} EACCES: not executable` : `spawn ${file} ENOENT: not found in PATH`, denied ? "EACCES" : "ENOENT");
}
