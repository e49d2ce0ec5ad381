/**
 * How an fs/* call with a `sandbox` runs, as upstream decides it
 * (local_file_system.rs): reads directly when the profile reads the whole
 * disk, writes directly when it writes the whole disk (sandbox/whole-disk.ts),
 * anything else inside the sandbox (run-operation.ts). The context's paths
 * are checked first, with upstream's codes and words.
 */
import type { FileSystemSandboxEntry, WireFileSystemSandboxContext } from "@execmux/shared";
import { invalidParams, invalidRequest } from "../../errors/rpc-error.js";
import { prepareFsSandbox, type PreparedFsSandbox } from "../../sandbox/index.js";
import { readsWholeDisk, writesWholeDisk } from "../../sandbox/whole-disk.js";
import type { HandlerContext } from "../context.js";
import { pathUriError } from "./fs-path.js";
import { HiddenFiles } from "./hidden-files.js";

export type FsAccess = "read" | "write";

/** Entries resolved against the policy's cwd: project roots and relative globs. */
function needsCwd(entry: FileSystemSandboxEntry): boolean {
  const { path } = entry;
  if (path.type === "glob_pattern") return !path.pattern.startsWith("/");
  return path.type === "special" && (path.value.kind === "project_roots" || path.value.kind === "current_working_directory");
}

/** The context's paths must parse (-32602), the profile's cwd be known if it needs one (-32602), and its paths suit this host (-32600). */
function checkContextPaths(sandbox: WireFileSystemSandboxContext): void {
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
}

/**
 * Undefined when the call runs directly; else the sandbox to run it in, or
 * a -32602 saying why none can be made here (no bubblewrap, user namespaces
 * off, an entry bubblewrap cannot enforce).
 */
export async function fsConfinement(
  sandbox: WireFileSystemSandboxContext | null | undefined,
  access: FsAccess,
  { connection }: Pick<HandlerContext, "connection">,
): Promise<PreparedFsSandbox | undefined> {
  if (!sandbox) return undefined;
  checkContextPaths(sandbox);
  if (access === "read" ? readsWholeDisk(sandbox.permissions) : writesWholeDisk(sandbox.permissions)) return undefined;
  return prepareFsSandbox(sandbox, { hiddenPaths: connection.deps.hiddenPaths });
}

/**
 * What a call under a sandbox profile must not reach when it runs in the
 * daemon (the profile reads or writes the whole disk): the daemon's own
 * files, which a confined call's mounts hide (hidden-files.ts). Undefined
 * without a sandbox: such a client may reach anything.
 */
export function hiddenFilesFor(
  sandbox: WireFileSystemSandboxContext | null | undefined,
  { connection }: Pick<HandlerContext, "connection">,
): Promise<HiddenFiles> | undefined {
  return sandbox ? HiddenFiles.of(connection.deps.hiddenPaths) : undefined;
}
