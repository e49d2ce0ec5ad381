import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import { invalidParams } from "../rpc/rpc-error.js";

/** `cwd` as an absolute path or a file:// URI, checked to be an existing directory. */
export function resolveCwd(cwd: string): string {
  let path = cwd;
  if (cwd.startsWith("file:")) {
    try {
      path = fileURLToPath(cwd);
    } catch (error) {
      throw invalidParams(`cwd ${cwd} is not a valid file:// URI: ${(error as Error).message}`);
    }
  }
  if (!isAbsolute(path)) throw invalidParams(`cwd must be an absolute path or a file:// URI, got ${cwd}`);
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    throw invalidParams(`cwd ${path} does not exist`);
  }
  if (!isDirectory) throw invalidParams(`cwd ${path} is not a directory`);
  return path;
}
