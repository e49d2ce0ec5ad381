/**
 * What an fs/* call's `sandbox` allows without an OS sandbox, as upstream
 * decides it (local_file_system.rs): reads run directly when the profile
 * grants full-disk read, writes when it grants full-disk write; anything
 * narrower needs a sandboxed helper, which execmux does not have yet, so it
 * fails closed with upstream's words for a missing helper. The one place the
 * sandbox work replaces once it lands.
 */
import type { FsPermissionProfile, FsSandboxContext, FsSandboxEntry } from "@execmux/shared";
import { invalidParams, invalidRequest } from "../../rpc/rpc-error.js";
import { pathUriError } from "./fs-path.js";

export type FsAccess = "read" | "write";

const isRoot = (entry: FsSandboxEntry) => entry.path.type === "special" && entry.path.value.kind === "root";
const denies = (entry: FsSandboxEntry) => entry.access === "deny" || entry.access === "none";
const samePath = (a: FsSandboxEntry, b: FsSandboxEntry) => JSON.stringify(a.path) === JSON.stringify(b.path);

/** Entries resolved against the policy's cwd: project roots and relative globs. */
function needsCwd(entry: FsSandboxEntry): boolean {
  const { path } = entry;
  if (path.type === "glob_pattern") return !path.pattern.startsWith("/");
  return path.type === "special" && (path.value.kind === "project_roots" || path.value.kind === "current_working_directory");
}

/** A `:root` grant with nothing denied anywhere (a deny can hide any path). */
function hasFullDiskRead(entries: readonly FsSandboxEntry[]): boolean {
  return entries.some((entry) => isRoot(entry) && !denies(entry)) && !entries.some(denies);
}

/**
 * A `:root = write` grant that no other entry narrows. Stricter than
 * upstream where upstream's precedence rules are subtle (a deny is always
 * narrowing here): the cost of being stricter is a refused call, never a
 * write the profile forbids.
 */
function hasFullDiskWrite(entries: readonly FsSandboxEntry[]): boolean {
  if (!entries.some((entry) => isRoot(entry) && entry.access === "write")) return false;
  return entries.every((entry) => {
    if (entry.access === "write") return true;
    if (denies(entry)) return false;
    if (entry.path.type === "glob_pattern") return false;
    if (entry.path.type === "special" && ["root", "minimal", "unknown"].includes(entry.path.value.kind)) return true;
    // A read-only path narrows `:root = write` unless a write entry for the same target overrides it.
    return entries.some((other) => other.access === "write" && samePath(other, entry));
  });
}

function grants(profile: FsPermissionProfile, access: FsAccess): boolean {
  if (profile.type !== "managed" || profile.file_system.type === "unrestricted") return true;
  const { entries } = profile.file_system;
  return access === "read" ? hasFullDiskRead(entries) : hasFullDiskWrite(entries);
}

/**
 * Throws unless an fs call with this `sandbox` may run directly: the
 * context's paths must parse (-32602) and suit this host (-32600), and the
 * profile must not need a sandboxed helper for `access` (-32600).
 */
export function checkFsSandbox(sandbox: FsSandboxContext | null | undefined, access: FsAccess): void {
  if (!sandbox) return;
  const entries = sandbox.permissions.type === "managed" && sandbox.permissions.file_system.type === "restricted"
    ? sandbox.permissions.file_system.entries
    : [];
  const policyCwd = sandbox.policyContext?.cwd ?? sandbox.cwd;
  const uris = [policyCwd, ...entries.map((entry) => (entry.path.type === "path" ? entry.path.path : undefined))];
  for (const uri of uris) {
    const error = uri === undefined || uri === null ? undefined : pathUriError(uri);
    if (error?.parse) throw invalidParams(error.reason);
  }
  if (!policyCwd && entries.some(needsCwd)) throw invalidParams("file system sandbox context with dynamic permissions requires cwd");
  for (const entry of entries) {
    const error = entry.path.type === "path" ? pathUriError(entry.path.path) : undefined;
    if (error) throw invalidRequest(`invalid sandbox permission path URI: ${error.reason}`);
  }
  if (!grants(sandbox.permissions, access)) throw invalidRequest("sandboxed filesystem operations require configured runtime paths");
}
