/**
 * The executor's own Codex configuration, as upstream 0.171 reads it for
 * environmentConfig/read (asked of the binary; docs/upstream-capabilities.md):
 *
 * - the user layer, $CODEX_HOME/config.toml (~/.codex when CODEX_HOME is unset);
 * - project layers, only when the user layer trusts the project: the
 *   nearest of `cwd` and the directories above it, up to the project's root
 *   (the Git repository around `cwd`, else `cwd` alone), that has a
 *   `[projects."<dir>"]` entry decides, and `trust_level = "trusted"` brings
 *   in each `.codex/config.toml` from that directory down to `cwd`, the
 *   highest first;
 * - each cut down to the key paths asked for, in the file's own order, and
 *   left out when none of them is there.
 *
 * Not read (upstream's other sources, which a plain host does not have):
 * system config and requirements, managed and cloud layers. So
 * `requirements` has no layers and `cloudInsertionIndex` is 0, as upstream
 * answers on such a host. The TOML is re-serialized by smol-toml: the same
 * document as upstream's toml crate writes, spaced a little differently
 * inside arrays.
 */
import { existsSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir, hostname } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { pathToFileUri, type EnvironmentConfigLayer, type EnvironmentConfigReadResult } from "@execmux/shared";
import { parse, stringify, type TomlTable } from "smol-toml";
import { internalError, invalidRequest } from "../../errors/rpc-error.js";

/** A config file larger than this is refused: Codex's are a few KiB. */
const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

type KeyPath = readonly string[];

export async function readEnvironmentConfig(cwd: string, configPaths: readonly KeyPath[], env: NodeJS.ProcessEnv): Promise<EnvironmentConfigReadResult> {
  const userHome = homedir();
  const codexHome = env["CODEX_HOME"] || join(userHome, ".codex");
  const layers: EnvironmentConfigLayer[] = [];
  const userFile = join(codexHome, "config.toml");
  const user = await loadToml(userFile);
  if (user) pushLayer(layers, `user (${userFile})`, userFile, user, configPaths);
  const trusted = user ? trustedDirectory(user, cwd) : undefined;
  if (user && trusted !== undefined) {
    for (const directory of directoriesDown(trusted, cwd)) {
      const file = join(directory, ".codex", "config.toml");
      const project = await loadToml(file);
      if (project) pushLayer(layers, `project (${file})`, file, project, configPaths);
    }
  }
  return {
    userHomeDir: pathToFileUri(userHome),
    codexHomeDir: pathToFileUri(codexHome),
    hostname: hostname(),
    config: { layers, cloudInsertionIndex: 0 },
    requirements: { layers: [], cloudInsertionIndex: 0 },
  };
}

function pushLayer(layers: EnvironmentConfigLayer[], source: string, file: string, document: TomlTable, paths: readonly KeyPath[]): void {
  const kept = keepPaths(document, paths);
  if (Object.keys(kept).length > 0) layers.push({ source, baseDir: pathToFileUri(dirname(file)), toml: stringify(kept) });
}

/** The document, or undefined when the file is not there; upstream's -32603 when it does not parse. */
async function loadToml(file: string): Promise<TomlTable | undefined> {
  let text: string;
  try {
    if (statSync(file).size > MAX_CONFIG_FILE_BYTES) throw invalidRequest(`${file} is larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw internalError(`failed to load executor-local config: ${file}: ${(error as Error).message}`);
  }
  try {
    return parse(text);
  } catch (error) {
    throw internalError(`failed to load executor-local config: ${file}: ${(error as Error).message.split("\n")[0]}`);
  }
}

/** Only the keys on the paths asked for (a whole subtree where a path ends), in the document's order. */
export function keepPaths(table: TomlTable, paths: readonly KeyPath[]): TomlTable {
  const kept: TomlTable = {};
  for (const [key, value] of Object.entries(table)) {
    const below = paths.filter((path) => path[0] === key);
    if (below.length === 0) continue;
    if (below.some((path) => path.length === 1)) kept[key] = value;
    else if (isTable(value)) {
      const inner = keepPaths(value, below.map((path) => path.slice(1)));
      if (Object.keys(inner).length > 0) kept[key] = inner;
    }
  }
  return kept;
}

/** A TOML table (smol-toml makes them without a prototype), not an array or a date-time. */
const isTable = (value: unknown): value is TomlTable => {
  if (value === null || typeof value !== "object") return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === null || prototype === Object.prototype;
};

/** The Git repository's root around `cwd` (a `.git` file, or a directory with a HEAD), else `cwd` itself. */
function projectRoot(cwd: string): string {
  for (let directory = cwd; ; directory = dirname(directory)) {
    const git = join(directory, ".git");
    try {
      const stats = statSync(git);
      if (stats.isFile() || (stats.isDirectory() && existsSync(join(git, "HEAD")))) return directory;
    } catch {
      // no .git here
    }
    if (dirname(directory) === directory) return cwd;
  }
}

/** The directory whose trust entry decides for `cwd`, when that entry trusts it. */
function trustedDirectory(user: TomlTable, cwd: string): string | undefined {
  const projects = user["projects"];
  if (!isTable(projects)) return undefined;
  const root = projectRoot(cwd);
  for (let directory = cwd; ; directory = dirname(directory)) {
    const entry = projects[directory];
    if (isTable(entry)) return entry["trust_level"] === "trusted" ? directory : undefined;
    if (directory === root || dirname(directory) === directory) return undefined;
  }
}

/** `root`, then each directory below it down to `cwd`. */
function directoriesDown(root: string, cwd: string): string[] {
  const directories = [root];
  const rest = relative(root, cwd);
  if (rest === "" || rest.startsWith("..")) return directories;
  let current = root;
  for (const part of rest.split(sep)) directories.push((current = join(current, part)));
  return directories;
}
