/**
 * environmentConfig/read (capability environmentConfigRead): checks the
 * params with upstream's words, then reads (config-layers.ts, loaded on the
 * first call with its TOML parser: a daemon whose clients never ask loads
 * neither).
 */
import type { ParamsOf, ResultOf } from "@execmux/shared";
import { invalidParams } from "../../errors/rpc-error.js";
import { fsPath } from "../fs/fs-path.js";

/** Key paths a call may ask for, and segments a path may have: far past what Codex asks (one path, one segment). */
const MAX_KEY_PATHS = 256;
const MAX_KEY_PATH_SEGMENTS = 32;

export async function environmentConfigRead(params: ParamsOf<"environmentConfig/read">): Promise<ResultOf<"environmentConfig/read">> {
  const cwd = fsPath(params.cwd);
  const paths = [...params.configPaths, ...params.requirementsPaths];
  if (paths.length === 0) throw invalidParams("at least one config or requirements path is required");
  if (paths.some((path) => path.length === 0)) throw invalidParams("TOML paths must contain at least one key segment");
  if (paths.length > MAX_KEY_PATHS || paths.some((path) => path.length > MAX_KEY_PATH_SEGMENTS)) {
    throw invalidParams(`at most ${MAX_KEY_PATHS} TOML paths of at most ${MAX_KEY_PATH_SEGMENTS} key segments may be read at once`);
  }
  const { readEnvironmentConfig } = await import("./config-layers.js");
  return readEnvironmentConfig(cwd, params.configPaths, process.env);
}
