/**
 * capabilityRoots/discoverV1's work for a run of roots: one bounded walk per
 * root, then the recognised files read whole, as upstream 0.171's
 * capability_discovery.rs does it (its order, limits and warning words,
 * asked of the binary). Plain arguments in, plain JSON out: it runs in the
 * daemon, or inside a sandbox through a confined helper (discover-v1.ts)
 * when the root's profile does not read the whole disk, where the kernel
 * refuses what the profile denies and the same code reports it.
 *
 * Imports nothing that loads the protocol's schemas (the helper's start).
 */
import type { FileHandle } from "node:fs/promises";
import { open, stat } from "node:fs/promises";
import { dirname, posix } from "node:path";
import type { CapabilityRootDiscovery, CapabilityTextFile, DiscoveredSkillFiles, FsWalkResult } from "@execmux/shared";
import { fileUriToPath, pathToFileUri } from "@execmux/shared/path-uri";
import { fsError } from "../fs/fs-error.js";
import { HiddenFiles } from "../fs/hidden-files.js";
import { walkTree } from "../fs/walk-tree.js";
import { utf8Error } from "./utf8-error.js";

/** Upstream's bounds, per root. */
export const MAX_SCAN_DEPTH = 6;
export const MAX_DIRECTORIES_PER_ROOT = 2_000;
export const MAX_ENTRIES_PER_ROOT = 20_000;
export const MAX_FILE_BYTES = 1024 * 1024;
export const MAX_BUNDLE_BYTES_PER_ROOT = 16 * 1024 * 1024;

/** Where a root's plugin keeps its manifest, in the order upstream prefers them. */
export const PLUGIN_MANIFEST_PATHS = [".codex-plugin/plugin.json", ".claude-plugin/plugin.json", ".cursor-plugin/plugin.json"] as const;
const MANIFEST_DIRECTORIES = PLUGIN_MANIFEST_PATHS.map((path) => path.split("/")[0]!);
const SKILL_FILE_NAME = "SKILL.md";
const SKILL_METADATA_PATH = "agents/openai.yaml";
const DEFAULT_MCP_CONFIG_PATH = ".mcp.json";

export interface RootToDiscover {
  readonly id: string;
  /** As the client sent it: echoed, and quoted in messages. */
  readonly uri: string;
  /** The native path, or why the URI names none on this host (upstream's words). */
  readonly path: string | { readonly invalid: string };
}

/** execmux's bounds on one request, on top of upstream's per root. */
export interface RequestLimits {
  /** File contents the request may return, all roots together. */
  readonly maxBytes: number;
  /** Walk entries the request may examine, all roots together. */
  readonly maxEntries: number;
  /** Date.now() past which no root is started. */
  readonly deadline: number;
  /** Paths to refuse (the daemon's own files) when this runs in the daemon under a sandbox profile. */
  readonly hiddenPaths?: readonly string[];
}

export interface RootsOutcome {
  readonly roots: CapabilityRootDiscovery[];
  /** What the roots used of the request's limits, for the next run of roots. */
  readonly bytes: number;
  readonly entries: number;
}

/** Bytes read so far: the root's (upstream's bound) and the request's (execmux's). */
class Budget {
  private rootBytes = 0;
  spent = 0;
  constructor(private readonly requestBytes: number) {}

  nextRoot(): void {
    this.rootBytes = 0;
  }

  /** Undefined when `bytes` more fit; else the warning that says why not. */
  refusal(bytes: number): string | undefined {
    if (this.rootBytes + bytes > MAX_BUNDLE_BYTES_PER_ROOT) return `capability root bundle exceeds the ${MAX_BUNDLE_BYTES_PER_ROOT}-byte limit`;
    if (this.spent + bytes > this.requestBytes) return `capability discovery request exceeds execmux's ${this.requestBytes}-byte limit`;
    return undefined;
  }

  add(bytes: number): void {
    this.rootBytes += bytes;
    this.spent += bytes;
  }
}

const message = (error: unknown) => fsError(error).message;
const join = (directory: string, relative: string) => posix.join(directory, relative);
const basename = (path: string) => posix.basename(path);

export async function discoverRoots(roots: readonly RootToDiscover[], limits: RequestLimits, signal?: AbortSignal): Promise<RootsOutcome> {
  const hidden = limits.hiddenPaths ? await HiddenFiles.of(limits.hiddenPaths) : undefined;
  const budget = new Budget(limits.maxBytes);
  let entriesLeft = limits.maxEntries;
  const results: CapabilityRootDiscovery[] = [];
  for (const root of roots) {
    budget.nextRoot();
    const discovery = emptyDiscovery(root);
    results.push(discovery);
    if (Date.now() > limits.deadline) {
      discovery.error = `capability discovery stopped before this root: the request ran past execmux's time limit`;
      continue;
    }
    const reader = new TextFileReader(budget, discovery.warnings, hidden);
    const examined = await discoverRoot(root, discovery, reader, Math.min(MAX_ENTRIES_PER_ROOT, entriesLeft), hidden, signal);
    entriesLeft = Math.max(0, entriesLeft - examined);
  }
  return { roots: results, bytes: budget.spent, entries: limits.maxEntries - entriesLeft };
}

function emptyDiscovery(root: RootToDiscover): CapabilityRootDiscovery {
  return { id: root.id, path: root.uri, plugin: null, skills: [], namespaceManifests: [], warnings: [], error: null };
}

/** Fills `discovery` for one root; returns the walk entries it examined. */
async function discoverRoot(
  root: RootToDiscover,
  discovery: CapabilityRootDiscovery,
  reader: TextFileReader,
  maxEntries: number,
  hidden: HiddenFiles | undefined,
  signal: AbortSignal | undefined,
): Promise<number> {
  if (typeof root.path !== "string") {
    discovery.error = `failed to inspect capability root ${root.uri}: ${root.path.invalid}`;
    return 0;
  }
  const path = root.path;
  try {
    await hidden?.checkPath(path);
    if (!(await stat(path)).isDirectory()) {
      discovery.error = `capability root ${root.uri} is not a directory`;
      return 0;
    }
  } catch (error) {
    discovery.error = `failed to inspect capability root ${root.uri}: ${message(error)}`;
    return 0;
  }

  let walk: FsWalkResult;
  try {
    const options = { maxDepth: MAX_SCAN_DEPTH, maxDirectories: MAX_DIRECTORIES_PER_ROOT, maxEntries, followDirectorySymlinks: true, pruneHiddenDirectories: false };
    // The request's entries spent: nothing more is walked, and the root says it was cut short.
    walk = maxEntries > 0 ? await walkTree(path, options, signal) : { entries: [], errors: [], truncated: true };
  } catch (error) {
    if (signal?.aborted) throw error;
    discovery.error = `failed to scan capability root ${root.uri}: ${message(error)}`;
    return 0;
  }
  for (const error of walk.errors) discovery.warnings.push(`failed to scan capability path ${error.path}: ${error.message}`);
  if (walk.truncated) discovery.warnings.push(`capability scan reached its traversal limit (root: ${root.uri})`);

  const skillPaths: string[] = [];
  const manifestPaths: string[] = [];
  for (const entry of walk.entries) {
    if (entry.kind !== "file") continue;
    const native = nativeOf(entry.path);
    if (basename(native) === SKILL_FILE_NAME) skillPaths.push(native);
    if (manifestPriority(native) !== undefined) manifestPaths.push(native);
  }
  const byUri = (a: string, b: string) => compareStrings(pathToFileUri(a), pathToFileUri(b));
  skillPaths.sort(byUri);
  manifestPaths.sort((a, b) => compareStrings(pathToFileUri(pluginRootOf(a)), pathToFileUri(pluginRootOf(b))) || manifestPriority(a)! - manifestPriority(b)!);

  const rootManifest = await readFirstManifest(path, reader);
  const inherited = rootManifest ?? (await readNearestAncestorManifest(path, reader));
  const seenPluginRoots = new Set<string>();
  if (inherited) {
    seenPluginRoots.add(pluginRootOf(nativeOf(inherited.path)));
    discovery.namespaceManifests.push(inherited);
  }
  for (const manifestPath of manifestPaths) {
    const pluginRoot = pluginRootOf(manifestPath);
    if (seenPluginRoots.has(pluginRoot)) continue;
    seenPluginRoots.add(pluginRoot);
    const manifest = await reader.read(manifestPath);
    if (manifest) discovery.namespaceManifests.push(manifest);
  }

  if (rootManifest) {
    const declared = declaredPaths(path, rootManifest, discovery.warnings);
    const mcpPath = declared.mcpInline ? undefined : (declared.mcpConfig ?? join(path, DEFAULT_MCP_CONFIG_PATH));
    const mcpConfig = mcpPath === undefined ? null : ((await reader.read(mcpPath)) ?? null);
    const appsConfig = declared.appsConfig === undefined ? null : ((await reader.read(declared.appsConfig)) ?? null);
    discovery.plugin = { manifest: rootManifest, mcpConfig, appsConfig };
  }

  for (const skillPath of skillPaths) {
    const instructions = await reader.read(skillPath);
    if (!instructions) continue;
    const metadata = (await reader.read(join(dirname(skillPath), SKILL_METADATA_PATH))) ?? null;
    const skill: DiscoveredSkillFiles = { instructions, metadata };
    discovery.skills.push(skill);
  }
  return walk.entries.length + walk.errors.length;
}

/** A URI this module made (pathToFileUri) back to its native path. */
function nativeOf(uri: string): string {
  const parsed = fileUriToPath(uri);
  if ("error" in parsed) throw new Error(`a walk entry's URI did not parse: ${parsed.error}`);
  return parsed.path;
}

/** Byte order of ASCII URIs (pathToFileUri encodes everything else). */
const compareStrings = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The plugin a manifest belongs to: the directory above its manifest directory. */
const pluginRootOf = (manifestPath: string) => dirname(dirname(manifestPath));

/** Which of the manifest directories a `plugin.json` is in (lower is preferred); undefined for any other file. */
function manifestPriority(path: string): number | undefined {
  if (basename(path) !== "plugin.json") return undefined;
  const index = MANIFEST_DIRECTORIES.indexOf(basename(dirname(path)));
  return index < 0 ? undefined : index;
}

async function readFirstManifest(directory: string, reader: TextFileReader): Promise<CapabilityTextFile | undefined> {
  for (const relative of PLUGIN_MANIFEST_PATHS) {
    const manifest = await reader.read(join(directory, relative));
    if (manifest) return manifest;
  }
  return undefined;
}

/** A root inside a plugin (its skills directory) takes the plugin's manifest: the nearest one above it. */
async function readNearestAncestorManifest(root: string, reader: TextFileReader): Promise<CapabilityTextFile | undefined> {
  for (let directory = root; directory !== "/"; ) {
    directory = dirname(directory);
    const manifest = await readFirstManifest(directory, reader);
    if (manifest) return manifest;
  }
  return undefined;
}

/** The files a root's manifest names: `mcpServers` and `apps` as `./relative` paths below the root. */
function declaredPaths(root: string, manifest: CapabilityTextFile, warnings: string[]) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(manifest.contents);
  } catch {
    return { mcpInline: false, mcpConfig: undefined, appsConfig: undefined };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return { mcpInline: false, mcpConfig: undefined, appsConfig: undefined };
  const { mcpServers, apps } = parsed as { mcpServers?: unknown; apps?: unknown };
  return {
    mcpInline: mcpServers !== null && typeof mcpServers === "object" && !Array.isArray(mcpServers),
    mcpConfig: declaredFile(root, "mcpServers", mcpServers, manifest.path, warnings),
    appsConfig: declaredFile(root, "apps", apps, manifest.path, warnings),
  };
}

function declaredFile(root: string, field: string, value: unknown, manifestUri: string, warnings: string[]): string | undefined {
  if (typeof value !== "string") return undefined;
  if (!value.startsWith("./")) {
    warnings.push(`ignoring ${field} in ${manifestUri}: path must start with \`./\``);
    return undefined;
  }
  const relative = value.slice(2);
  if (relative === "" || relative.split(/[/\\]/).some((component) => component === "..")) {
    warnings.push(`ignoring ${field} in ${manifestUri}: path must remain below the capability root`);
    return undefined;
  }
  const path = join(root, relative);
  if (path !== root && !path.startsWith(root === "/" ? "/" : `${root}/`)) {
    warnings.push(`ignoring ${field} in ${manifestUri}: path must remain below the capability root`);
    return undefined;
  }
  return path;
}

/**
 * Reads a recognised file whole, if it is one: a missing path, or one that
 * is not a regular file, is no file (no warning); anything else that stops
 * it is a warning, in upstream's words, and the file is left out.
 */
class TextFileReader {
  constructor(
    private readonly budget: Budget,
    private readonly warnings: string[],
    private readonly hidden: HiddenFiles | undefined,
  ) {}

  async read(path: string): Promise<CapabilityTextFile | undefined> {
    const uri = pathToFileUri(path);
    let size: number;
    try {
      const stats = await stat(path);
      if (!stats.isFile()) return undefined;
      size = stats.size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      this.warnings.push(`failed to inspect capability file ${uri}: ${message(error)}`);
      return undefined;
    }
    if (size > MAX_FILE_BYTES) {
      this.warnings.push(`capability file ${uri} exceeds the ${MAX_FILE_BYTES}-byte limit`);
      return undefined;
    }
    const refusal = this.budget.refusal(size);
    if (refusal) {
      this.warnings.push(refusal);
      return undefined;
    }
    let bytes: Buffer;
    try {
      const read = await this.readBounded(path);
      if (read === "too long") {
        this.warnings.push(`capability file ${uri} exceeded its read limit`);
        return undefined;
      }
      bytes = read;
    } catch (error) {
      this.warnings.push(`failed to read capability file ${uri}: ${message(error)}`);
      return undefined;
    }
    const lateRefusal = this.budget.refusal(bytes.length);
    if (lateRefusal) {
      this.warnings.push(lateRefusal);
      return undefined;
    }
    const invalid = utf8Error(bytes);
    if (invalid) {
      this.warnings.push(`capability file ${uri} is not UTF-8: ${invalid}`);
      return undefined;
    }
    this.budget.add(bytes.length);
    return { path: uri, contents: bytes.toString("utf8") };
  }

  /** The file's bytes, or "too long" once it grew past the bounds since it was looked at. */
  private async readBounded(path: string): Promise<Buffer | "too long"> {
    let file: FileHandle | undefined;
    try {
      file = await open(path, "r");
      await this.hidden?.checkOpened(file, path);
      const chunks: Buffer[] = [];
      let length = 0;
      for (;;) {
        const chunk = Buffer.allocUnsafe(64 * 1024);
        const { bytesRead } = await file.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) return Buffer.concat(chunks, length);
        length += bytesRead;
        if (length > MAX_FILE_BYTES || this.budget.refusal(length) !== undefined) return "too long";
        chunks.push(chunk.subarray(0, bytesRead));
      }
    } finally {
      await file?.close();
    }
  }
}
