/**
 * capabilities/discoverV2's work: the executor's own installed plugins and
 * skills, found where upstream 0.171 looks for them and parsed as it parses
 * them (docs/upstream-capabilities.md, asked of the binary):
 *
 * - plugins: `$CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>/`,
 *   the highest version of each, whatever config.toml enables;
 * - skills: `$CODEX_HOME/skills` (codex-home-skills), then
 *   `$HOME/.agents/skills` (user-agent-skills).
 *
 * The files are found and read by capabilityRoots/discoverV1's walk
 * (root-discovery.ts, with its bounds), in one run for all locations so
 * the request's bounds hold across them; this module only names the
 * locations and turns the files into upstream's records.
 */
import { opendir } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import type { CapabilityRootDiscovery, CapabilityTextFile, DiscoverV2CapabilitiesResult, DiscoveredSkillFiles, ExecutorSkill } from "@execmux/shared";
import { pathToFileUri } from "@execmux/shared/path-uri";
import type { RequestLimits, RootToDiscover, RootsOutcome } from "./root-discovery.js";
import { parseSkillFiles } from "./skill-metadata.js";

/** Upstream's words when a manifest or a skill's metadata did not load; it names neither. */
export const METADATA_WARNING = "some capability metadata could not be loaded; discovery may be incomplete";
/** …and when a location could not be looked at (other than not existing). */
export const LOCATION_WARNING = "some capability locations could not be resolved; discovery may be incomplete";

/** Where the executor's capabilities are installed: from the daemon's own environment, as upstream's. */
export interface ExecutorHome {
  readonly codexHome: string;
  readonly userHome: string;
}

export function executorHome(env: NodeJS.ProcessEnv = process.env): ExecutorHome {
  const userHome = homedir();
  return { codexHome: env["CODEX_HOME"] || join(userHome, ".codex"), userHome };
}

interface InstalledPlugin {
  readonly id: string;
  readonly directoryName: string;
  readonly version: string;
  readonly root: string;
}

type Discover = (roots: readonly RootToDiscover[], limits: RequestLimits) => Promise<RootsOutcome>;

export async function discoverExecutorCapabilities(home: ExecutorHome, limits: RequestLimits, discover: Discover): Promise<DiscoverV2CapabilitiesResult> {
  const result: DiscoverV2CapabilitiesResult = { plugins: [], skills: [], warnings: [] };
  const plugins = await installedPlugins(join(home.codexHome, "plugins", "cache"), result.warnings);
  const skillRoots = [
    { id: "codex-home-skills", path: join(home.codexHome, "skills") },
    { id: "user-agent-skills", path: join(home.userHome, ".agents", "skills") },
  ];
  const roots: RootToDiscover[] = [
    ...plugins.map((plugin) => ({ id: plugin.id, uri: pathToFileUri(plugin.root), path: plugin.root })),
    ...skillRoots.map((root) => ({ id: root.id, uri: pathToFileUri(root.path), path: root.path })),
  ];
  const { roots: found } = await discover(roots, limits);

  // Upstream warns once per plugin and once per skill location, however many of its files failed.
  for (const [index, plugin] of plugins.entries()) {
    const discovery = found[index]!;
    const problems = new Set(problemsOf(discovery));
    if (!discovery.plugin) {
      if (discovery.error === null) problems.add(METADATA_WARNING);
      result.warnings.push(...problems);
      continue;
    }
    const manifest = manifestFields(discovery.plugin.manifest);
    // Without a name in the manifest, upstream names the plugin after its root: the version directory.
    const prefix = manifest.name ?? plugin.version;
    const skills = skillsOf(discovery.skills, problems);
    result.plugins.push({
      id: plugin.id,
      displayName: manifest.displayName ?? manifest.name ?? plugin.version,
      remotePluginId: null,
      version: plugin.version,
      root: pathToFileUri(plugin.root),
      files: discovery.plugin,
      skills: skills.map((skill) => ({ ...skill, name: `${prefix}:${skill.name}` })),
    });
    result.warnings.push(...problems);
  }
  for (const [index, root] of skillRoots.entries()) {
    const discovery = found[plugins.length + index]!;
    const problems = new Set(problemsOf(discovery));
    const discoveryRoot = { id: root.id, path: pathToFileUri(root.path) };
    for (const skill of skillsOf(discovery.skills, problems)) result.skills.push({ ...skill, discoveryRoot });
    result.warnings.push(...problems);
  }
  return result;
}

function skillsOf(files: readonly DiscoveredSkillFiles[], problems: Set<string>): ExecutorSkill[] {
  const skills: ExecutorSkill[] = [];
  for (const file of files) {
    const skill = parseSkillFiles(file);
    if (skill) skills.push(skill);
    else problems.add(METADATA_WARNING);
  }
  return skills;
}

/** A location that is missing is no location; one that could not be read, or files that could not be, is a warning. */
function problemsOf(discovery: CapabilityRootDiscovery): string[] {
  const unreadable = (discovery.error !== null && !/\(os error 2\)$/.test(discovery.error)) || discovery.warnings.length > 0;
  return unreadable ? [LOCATION_WARNING] : [];
}

function manifestFields(manifest: CapabilityTextFile): { name?: string; displayName?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(manifest.contents);
  } catch {
    return {};
  }
  if (parsed === null || typeof parsed !== "object") return {};
  const { name, interface: face } = parsed as { name?: unknown; interface?: { displayName?: unknown } | null };
  const displayName = face && typeof face === "object" ? face.displayName : undefined;
  return { ...(typeof name === "string" ? { name } : {}), ...(typeof displayName === "string" ? { displayName } : {}) };
}

/** Each `<marketplace>/<plugin>/` of the cache at its highest version, sorted by id. */
async function installedPlugins(cache: string, warnings: string[]): Promise<InstalledPlugin[]> {
  const plugins: InstalledPlugin[] = [];
  for (const marketplace of await directoriesIn(cache, warnings)) {
    for (const plugin of await directoriesIn(join(cache, marketplace), warnings)) {
      const versions = await directoriesIn(join(cache, marketplace, plugin), warnings);
      const version = versions.sort(compareVersions).at(-1);
      if (version === undefined) continue;
      plugins.push({ id: `${plugin}@${marketplace}`, directoryName: plugin, version, root: join(cache, marketplace, plugin, version) });
    }
  }
  return plugins.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A bound on what one request lists of the cache: it is Codex's own, a few dozen plugins. */
const MAX_CACHE_ENTRIES = 4096;

async function directoriesIn(directory: string, warnings: string[]): Promise<string[]> {
  const names: string[] = [];
  try {
    // Read entry by entry: a directory of a million entries costs no more than MAX_CACHE_ENTRIES of them.
    const listing = await opendir(directory);
    let seen = 0;
    for await (const entry of listing) {
      if (++seen > MAX_CACHE_ENTRIES) {
        if (!warnings.includes(LOCATION_WARNING)) warnings.push(LOCATION_WARNING);
        break;
      }
      if (entry.isDirectory()) names.push(entry.name);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" && !warnings.includes(LOCATION_WARNING)) warnings.push(LOCATION_WARNING);
  }
  return names;
}

/** Dot-separated numbers compared as numbers (`10.0.0` after `2.0.0`); anything else by its text. */
export function compareVersions(a: string, b: string): number {
  const [left, right] = [a, b].map((version) => version.split(/[.+-]/));
  for (let index = 0; index < Math.max(left!.length, right!.length); index++) {
    const [x, y] = [left![index] ?? "", right![index] ?? ""];
    const [m, n] = [Number(x), Number(y)];
    const numeric = /^\d+$/.test(x) && /^\d+$/.test(y);
    const order = numeric ? m - n : x < y ? -1 : x > y ? 1 : 0;
    if (order !== 0) return order;
  }
  return 0;
}
