/**
 * From upstream's sandbox context to a SandboxPolicy on this host: special
 * paths resolved (project roots against the policy's cwd and workspace
 * roots, tmpdir, /tmp), paths canonicalized, missing ones handled per
 * `missing_path_behavior`. Whatever bubblewrap cannot enforce exactly is
 * refused with -32602 naming the entry: a sandbox is never weaker than asked.
 */
import { lstatSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, resolve, sep } from "node:path";
import { fileUriToPath } from "@execmux/shared/path-uri";
import type { FileSystemSandboxEntry, FileSystemSpecialPath, PermissionProfile } from "@execmux/shared";
import { invalidParams } from "../errors/rpc-error.js";
import { accessAt, isWithin, makePolicy, type PathAccess, type PathRule, type SandboxPolicy } from "./policy.js";

/** What the profile's relative parts are resolved against. */
export interface PolicyPaths {
  /** The policy's cwd (native, absolute). */
  readonly cwd: string;
  /** What `project_roots` means; the cwd when the client gave none. */
  readonly workspaceRoots: readonly string[];
  /** What `tmpdir` means; empty when there is none. */
  readonly temporaryDirectories: readonly string[];
}

/** Paths that must never be visible inside a sandbox: the daemon's own secrets and plumbing. */
export interface ResolveOptions {
  readonly hiddenPaths: readonly string[];
  /** `enforceManagedNetwork` of process/start: fail closed on the network. */
  readonly enforceManagedNetwork: boolean;
  /** `managedNetwork` of process/start: a proxy on loopback the child would have to reach. */
  readonly managedNetwork: boolean;
  /**
   * The directory of an executor-local proxy's sockets: bound in (read-only:
   * connecting needs no write), and the network isolated, so the proxy is the
   * process's only way out.
   */
  readonly proxyBridge?: string | undefined;
}

/**
 * Upstream's protected metadata names (PROTECTED_METADATA_PATH_NAMES). At the
 * filesystem root they are what Codex grants write to for a command the user
 * approved to write anywhere (`for_approved_command`).
 */
const ROOT_METADATA_PATHS = [".git", ".agents", ".codex"].map((name) => join(sep, name));

/** Upstream's read roots for `minimal` on Linux: system binaries and libraries. */
const PLATFORM_DEFAULT_ROOTS = ["/bin", "/sbin", "/usr", "/etc", "/lib", "/lib64", "/nix/store", "/run/current-system/sw"];

/** A sandbox path (`file:` URI, or leniently a native absolute path) as a native absolute path. */
export function sandboxPathToNative(uri: string, what: string): string {
  let path = uri;
  if (uri.startsWith("file:")) {
    // As the fs/* calls read a URI (and upstream): a Windows path (a drive letter, a UNC host) is no path here.
    const parsed = fileUriToPath(uri);
    if ("error" in parsed) throw invalidParams(`invalid sandbox permission path URI: ${what} \`${uri}\`: ${parsed.error}`);
    path = parsed.path;
  }
  if (!isAbsolute(path)) throw invalidParams(`invalid sandbox permission path URI: ${what} \`${uri}\` is not an absolute path`);
  return normalize(path);
}

interface Candidate {
  readonly logical: string;
  readonly access: PathAccess;
  readonly skipMissing: boolean;
  readonly entry: string;
}

function describe(index: number, entry: FileSystemSandboxEntry): string {
  return `sandbox entry ${index} (${JSON.stringify(entry.path)} ${entry.access})`;
}

const accessOf = (entry: FileSystemSandboxEntry): PathAccess => (entry.access === "none" ? "deny" : entry.access);

function specialPaths(value: FileSystemSpecialPath, paths: PolicyPaths, entry: string, access: PathAccess): string[] {
  switch (value.kind) {
    case "root":
      return [sep];
    case "minimal":
      return PLATFORM_DEFAULT_ROOTS;
    case "slash_tmp":
      return ["/tmp"];
    case "tmpdir":
      return [...paths.temporaryDirectories];
    case "project_roots":
    case "current_working_directory": {
      const subpath = value.subpath ?? "";
      if (isAbsolute(subpath) || subpath.split(/[\\/]/).includes("..")) {
        throw invalidParams(`${entry}: subpath must stay inside the project roots`);
      }
      return paths.workspaceRoots.map((root) => (subpath ? join(root, subpath) : root));
    }
    case "unknown":
      // A token from a newer Codex. Ignoring a grant only takes access away;
      // ignoring a restriction would give more than asked.
      if (access === "write") return [];
      throw invalidParams(`${entry}: unknown special path \`${value.path}\` cannot be enforced on this executor`);
  }
}

function candidatesOf(entries: readonly FileSystemSandboxEntry[], paths: PolicyPaths): Candidate[] {
  const candidates: Candidate[] = [];
  entries.forEach((entry, index) => {
    const name = describe(index, entry);
    const access = accessOf(entry);
    const skipMissing = entry.missing_path_behavior === "skip";
    const add = (logical: string) => candidates.push({ logical: resolve(logical), access, skipMissing, entry: name });
    switch (entry.path.type) {
      case "path":
        add(sandboxPathToNative(entry.path.path, name));
        break;
      case "special":
        for (const path of specialPaths(entry.path.value, paths, name, access)) add(path);
        break;
      case "glob_pattern":
        // Bubblewrap masks paths, not patterns: a file matching the glob that
        // appears after the sandbox started would be readable.
        throw invalidParams(`${name}: glob patterns cannot be enforced by this executor's sandbox (bubblewrap masks concrete paths only)`);
    }
  });
  return candidates;
}

const exists = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** The longest prefix of `path` that exists (at worst "/"). */
function existingPrefix(path: string): string {
  let current = path;
  while (!exists(current) && current !== sep) current = dirname(current);
  return current;
}

/** The symlinks among the components of `path` (which exists up to its end). */
function symlinkComponents(path: string): string[] {
  const links: string[] = [];
  let current: string = sep;
  for (const part of path.split(sep).filter(Boolean)) {
    current = join(current, part);
    try {
      if (lstatSync(current).isSymbolicLink()) links.push(current);
    } catch {
      break;
    }
  }
  return links;
}

/**
 * A restriction (read or deny) on a path reached through a symlink the
 * sandboxed process may rewrite would protect only where the link pointed at
 * start: refused, as upstream does.
 */
function refuseWritableSymlink(candidate: Candidate, pathToCheck: string, rules: readonly PathRule[]): void {
  for (const link of symlinkComponents(pathToCheck)) {
    if (accessAt(rules, realpathSync(dirname(link))) === "write") {
      throw invalidParams(`${candidate.entry}: cannot enforce it because its path crosses the symlink ${link}, which the sandbox may rewrite`);
    }
  }
}

interface ProfileRules {
  readonly rules: PathRule[];
  readonly restrictions: Candidate[];
  /** Write grants on a root metadata path that is a symlink: the rule is its target's (see withoutReopenedDenials). */
  readonly linkedMetadataGrants: ReadonlySet<PathRule>;
}

function profileRules(permissions: PermissionProfile, paths: PolicyPaths): ProfileRules {
  if (permissions.type !== "managed" || permissions.file_system.type === "unrestricted") {
    // disabled, external (another sandbox owns the file system) and unrestricted: the whole disk.
    return { rules: [{ path: sep, access: "write" }], restrictions: [], linkedMetadataGrants: new Set() };
  }
  const candidates = candidatesOf(permissions.file_system.entries, paths);
  const rules: PathRule[] = [];
  const missing: Candidate[] = [];
  const linkedMetadataGrants = new Set<PathRule>();
  for (const candidate of candidates) {
    if (!exists(candidate.logical)) {
      missing.push(candidate);
      continue;
    }
    const rule: PathRule = { path: realpathSync(candidate.logical), access: candidate.access };
    rules.push(rule);
    if (candidate.access === "write" && ROOT_METADATA_PATHS.includes(candidate.logical) && lstatSync(candidate.logical).isSymbolicLink()) {
      linkedMetadataGrants.add(rule);
    }
  }
  const root = rules.filter((rule) => rule.path === sep).map((rule) => rule.access);
  if (!root.includes("read") && !root.includes("write")) {
    throw invalidParams(
      "sandbox profiles without full-disk read (a `root` entry with read access) are not supported by this executor's sandbox",
    );
  }
  const restrictions = candidates.filter((candidate) => candidate.access !== "write");
  // Without `skip`, a missing restricted path that the sandbox could create
  // cannot be protected without leaving a placeholder on the host: refused.
  for (const candidate of missing) {
    if (candidate.access === "write" || candidate.skipMissing) continue;
    const prefix = existingPrefix(candidate.logical);
    if (accessAt(rules, realpathSync(prefix)) === "write") {
      throw invalidParams(`${candidate.entry}: ${candidate.logical} does not exist and could be created inside a writable root`);
    }
  }
  return { rules, restrictions, linkedMetadataGrants };
}

/**
 * linuxApprovedRootWritePreservesRestrictions: a write grant on `/.git`,
 * `/.agents` or `/.codex` (what an approved command gets) whose symlink leads
 * into a directory the profile denies, or one the daemon hides, does not open
 * it: the grant is dropped and the target stays denied, through the link
 * too, as upstream keeps it. A target the profile grants itself keeps that
 * grant. (A grant on any other symlink follows it, as upstream's does.)
 */
function withoutReopenedDenials(rules: readonly PathRule[], linkedMetadataGrants: ReadonlySet<PathRule>): PathRule[] {
  // What the daemon hides stays hidden: no profile entry below it (a grant,
  // or a path resolved through a link) mounts any of it back in.
  const hidden = rules.filter((rule) => rule.daemonPrivate === true);
  const visible = rules.filter((rule) => rule.daemonPrivate === true || !hidden.some((denied) => isWithin(rule.path, denied.path)));
  if (linkedMetadataGrants.size === 0) return visible;
  // Judged by the other rules only: two such links to one target must not vouch for each other.
  const others = visible.filter((rule) => !linkedMetadataGrants.has(rule));
  return visible.filter((rule) => !linkedMetadataGrants.has(rule) || accessAt(others, rule.path) !== "deny");
}

function hiddenRules(hiddenPaths: readonly string[]): PathRule[] {
  return hiddenPaths.filter(exists).map((path) => ({ path: realpathSync(path), access: "deny", daemonPrivate: true }));
}

export function resolvePolicy(permissions: PermissionProfile, paths: PolicyPaths, options: ResolveOptions): SandboxPolicy {
  const { rules, restrictions, linkedMetadataGrants } = profileRules(permissions, paths);
  const all = withoutReopenedDenials([...rules, ...hiddenRules(options.hiddenPaths)], linkedMetadataGrants);
  for (const candidate of restrictions) refuseWritableSymlink(candidate, existingPrefix(candidate.logical), all);
  if (options.proxyBridge) {
    // Inside the daemon's hidden state directory: this one directory shows through.
    return makePolicy([...all, { path: realpathSync(options.proxyBridge), access: "read" }], true);
  }

  const networkRestricted = permissions.type !== "disabled" && permissions.network === "restricted";
  if (options.managedNetwork && (networkRestricted || options.enforceManagedNetwork)) {
    // Upstream bridges an isolated namespace to the client's proxy; bubblewrap alone cannot.
    throw invalidParams("managed network proxy routing cannot be enforced by this executor's sandbox");
  }
  // enforceManagedNetwork without a proxy to route to: upstream fails closed.
  return makePolicy(all, networkRestricted || options.enforceManagedNetwork);
}
