/**
 * The sandbox contexts Codex sends for its built-in modes, for clients (the
 * SDK, `execmux exec --sandbox`) that want the same confinement. Shaped
 * after a real Codex 0.169 session in `workspace-write` mode
 * (docs: real-clients.md): the whole disk readable, the project, /tmp and
 * $TMPDIR writable, the project's metadata directories read-only, no network.
 */
import { pathToFileUri } from "./path-uri.js";
import type { FileSystemSandboxContext, FileSystemSandboxEntry } from "./sandbox-schemas.js";

export const SandboxModes = ["read-only", "workspace-write"] as const;
export type SandboxMode = (typeof SandboxModes)[number];

/** Directories in the project that stay read-only although the project is writable. */
const PROTECTED_PROJECT_PATHS = [".git", ".agents", ".codex", ".aws"];

const special = (value: Record<string, string>, access: FileSystemSandboxEntry["access"], skip = false): FileSystemSandboxEntry =>
  ({ path: { type: "special", value }, access, ...(skip ? { missing_path_behavior: "skip" } : {}) }) as FileSystemSandboxEntry;

function entriesFor(mode: SandboxMode): FileSystemSandboxEntry[] {
  const root = special({ kind: "root" }, "read");
  if (mode === "read-only") return [root];
  return [
    root,
    special({ kind: "project_roots" }, "write"),
    special({ kind: "slash_tmp" }, "write"),
    special({ kind: "tmpdir" }, "write"),
    ...PROTECTED_PROJECT_PATHS.map((subpath) => special({ kind: "project_roots", subpath }, "read", true)),
  ];
}

/** The `sandbox` of process/start for `mode`, with the project at `project` (a native absolute path or a `file:` URI). */
export function codexSandbox(mode: SandboxMode, project: string): FileSystemSandboxContext {
  if (!project.startsWith("file:")) project = pathToFileUri(project);
  return {
    permissions: { type: "managed", file_system: { type: "restricted", entries: entriesFor(mode) }, network: "restricted" },
    cwd: project,
    workspaceRoots: [project],
    windowsSandboxLevel: "disabled",
    useLegacyLandlock: false,
  };
}
