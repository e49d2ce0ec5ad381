/**
 * Which cwd and workspace roots a sandbox context is resolved against. The
 * two wire forms differ (upstream-protocol.md §5.1, §5.2): process/start's
 * falls back to the process's cwd; the fs form prefers `policyContext` and
 * falls back to the daemon's own cwd unless the profile needs a real one.
 */
import type { FileSystemSandboxContext, PermissionProfile, WireFileSystemSandboxContext } from "@execmux/shared";
import { invalidParams } from "../errors/rpc-error.js";
import { sandboxPathToNative, type PolicyPaths } from "./resolve-policy.js";

function temporaryDirectories(context: FileSystemSandboxContext): string[] {
  if (context.temporaryDirectories) {
    return context.temporaryDirectories.map((uri) => sandboxPathToNative(uri, "temporaryDirectories"));
  }
  // Upstream's `tmpdir` is the executor's TMPDIR, and nothing without one.
  return process.env.TMPDIR ? [process.env.TMPDIR] : [];
}

function pathsFrom(context: FileSystemSandboxContext, cwd: string, workspaceRoots: readonly string[] | null | undefined): PolicyPaths {
  const roots = workspaceRoots?.length ? workspaceRoots.map((uri) => sandboxPathToNative(uri, "workspaceRoots")) : [cwd];
  return { cwd, workspaceRoots: roots, temporaryDirectories: temporaryDirectories(context) };
}

/** process/start: a legacy context without `cwd` takes the process's cwd. */
export function processPolicyPaths(context: FileSystemSandboxContext, processCwd: string): PolicyPaths {
  const cwd = context.cwd ? sandboxPathToNative(context.cwd, "sandbox cwd") : processCwd;
  return pathsFrom(context, cwd, context.workspaceRoots);
}

/** Whether the profile means something different depending on the cwd. */
function needsCwd(permissions: PermissionProfile): boolean {
  if (permissions.type !== "managed" || permissions.file_system.type !== "restricted") return false;
  return permissions.file_system.entries.some(
    ({ path }) =>
      (path.type === "special" && (path.value.kind === "project_roots" || path.value.kind === "current_working_directory")) ||
      (path.type === "glob_pattern" && !path.pattern.startsWith("/")),
  );
}

/** fs/*: `policyContext` first, then the legacy top-level fields, then the daemon's cwd. */
export function fsPolicyPaths(context: WireFileSystemSandboxContext, daemonCwd: string = process.cwd()): PolicyPaths {
  const cwdUri = context.policyContext?.cwd ?? context.cwd;
  if (!cwdUri && needsCwd(context.permissions)) {
    throw invalidParams("file system sandbox context with dynamic permissions requires cwd");
  }
  const cwd = cwdUri ? sandboxPathToNative(cwdUri, "sandbox cwd") : daemonCwd;
  return pathsFrom(context, cwd, context.policyContext?.workspaceRoots ?? context.workspaceRoots);
}
