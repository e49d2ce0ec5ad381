import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { SpawnError } from "./child.js";

/** execvp's fallback when the environment has no PATH. */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Finds the program the way execvp would, with the child's PATH. Done before
 * forking so that "no such program" is a start error, not a child that prints
 * "execvp failed" and exits 1 (what forkpty would give).
 */
export function resolveExecutable(file: string, cwd: string, pathVariable: string | undefined): string {
  if (file.includes("/")) {
    const candidate = isAbsolute(file) ? file : resolve(cwd, file);
    if (isExecutableFile(candidate)) return candidate;
    throw new SpawnError(`spawn ${file} ENOENT: not an executable file`, "ENOENT");
  }
  for (const directory of (pathVariable ?? DEFAULT_PATH).split(delimiter)) {
    const candidate = join(directory === "" ? cwd : resolve(cwd, directory), file);
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new SpawnError(`spawn ${file} ENOENT: not found in PATH`, "ENOENT");
}
