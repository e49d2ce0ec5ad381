import { statSync } from "node:fs";
import { fileUriToPath } from "@execmux/shared/core";
import { SpawnError } from "./spawn-error.js";
import { invalidParams } from "../errors/rpc-error.js";

/**
 * `cwd` (a file URI, or a native absolute path) as a directory on this host.
 * A URI that is no path here is a params error, as upstream; a directory that
 * does not exist is a spawn error (upstream learns it from the spawn), with
 * the same OS wording first and the directory named after it, so a client
 * can tell it from a missing program.
 */
export function resolveCwd(cwd: string): string {
  const parsed = fileUriToPath(cwd);
  if ("error" in parsed) {
    throw invalidParams(
      parsed.error.startsWith("'") ? `cwd URI \`${cwd}\` is not valid on this exec-server host: ${parsed.error}` : parsed.error,
    );
  }
  let isDirectory = false;
  try {
    isDirectory = statSync(parsed.path).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "ENOENT";
    throw new SpawnError(`cwd ${parsed.path}: ${code}`, code, `working directory ${parsed.path}`);
  }
  if (!isDirectory) throw new SpawnError(`cwd ${parsed.path} is not a directory`, "ENOTDIR", `working directory ${parsed.path}`);
  return parsed.path;
}
