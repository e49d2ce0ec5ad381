/**
 * Upstream's sandbox request, as `process/start` and the `fs/*` methods carry
 * it: a permission profile (what the process may read, write and reach) and
 * the paths it is resolved against. Written from upstream's serde types
 * (codex-rs `FileSystemSandboxContext`, `ExecPermissionProfile`); the keys
 * inside `permissions` are snake_case there, and so they are here.
 *
 * Unknown fields are ignored, never refused (no `additionalProperties:
 * false`), as serde does; unknown enum values are refused, as serde does.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Opt } from "./schemas/common.js";


/** A `file:` URI (or, leniently, a native absolute path); the daemon parses it. */
const SandboxPathUri = Type.String({ minLength: 1, maxLength: 16384 });
/** More entries than any real profile has; a bound on the work one request can ask for. */
const MAX_ENTRIES = 4096;

export const NetworkSandboxPolicySchema = Type.Union([Type.Literal("restricted"), Type.Literal("enabled")]);

/** `none` is upstream's legacy alias of `deny`. */
export const FileSystemAccessModeSchema = Type.Union([
  Type.Literal("read"),
  Type.Literal("write"),
  Type.Literal("deny"),
  Type.Literal("none"),
]);

const Subpath = Opt(Type.String({ maxLength: 4096 }));

/** Paths named by role rather than by path, resolved by the executor. */
export const FileSystemSpecialPathSchema = Type.Union([
  Type.Object({ kind: Type.Literal("root") }),
  Type.Object({ kind: Type.Literal("minimal") }),
  /** `current_working_directory` is upstream's alias of `project_roots`. */
  Type.Object({
    kind: Type.Union([Type.Literal("project_roots"), Type.Literal("current_working_directory")]),
    subpath: Subpath,
  }),
  Type.Object({ kind: Type.Literal("tmpdir") }),
  Type.Object({ kind: Type.Literal("slash_tmp") }),
  /** A token from a newer Codex this executor does not know. */
  Type.Object({ kind: Type.Literal("unknown"), path: Type.String({ maxLength: 4096 }), subpath: Subpath }),
]);

export const FileSystemPathSchema = Type.Union([
  Type.Object({ type: Type.Literal("path"), path: SandboxPathUri }),
  Type.Object({ type: Type.Literal("glob_pattern"), pattern: Type.String({ minLength: 1, maxLength: 4096 }) }),
  Type.Object({ type: Type.Literal("special"), value: FileSystemSpecialPathSchema }),
]);

export const FileSystemSandboxEntrySchema = Type.Object({
  path: FileSystemPathSchema,
  access: FileSystemAccessModeSchema,
  /** `skip`: an entry whose path does not exist is ignored. */
  missing_path_behavior: Opt(Type.Literal("skip")),
});

export const ManagedFileSystemSchema = Type.Union([
  Type.Object({ type: Type.Literal("unrestricted") }),
  Type.Object({
    type: Type.Literal("restricted"),
    entries: Type.Array(FileSystemSandboxEntrySchema, { maxItems: MAX_ENTRIES }),
    /** Upstream's NonZeroUsize: 0 is refused. */
    glob_scan_max_depth: Opt(Type.Integer({ minimum: 1 })),
  }),
]);

export const PermissionProfileSchema = Type.Union([
  /** No restriction at all. */
  Type.Object({ type: Type.Literal("disabled") }),
  /** Another sandbox, outside the executor, confines the file system. */
  Type.Object({ type: Type.Literal("external"), network: NetworkSandboxPolicySchema }),
  Type.Object({ type: Type.Literal("managed"), file_system: ManagedFileSystemSchema, network: NetworkSandboxPolicySchema }),
]);

const SandboxContextFields = {
  permissions: PermissionProfileSchema,
  /** The policy's cwd (may differ from the process's); legacy clients omit it. */
  cwd: Opt(SandboxPathUri),
  /** What `project_roots` means; omitted when empty. */
  workspaceRoots: Opt(Type.Array(SandboxPathUri, { maxItems: MAX_ENTRIES })),
  userHomeDir: Opt(SandboxPathUri),
  /** What `tmpdir` means; the executor's TMPDIR when absent. */
  temporaryDirectories: Opt(Type.Array(SandboxPathUri, { maxItems: MAX_ENTRIES })),
  /** Windows only, and ignored on Linux; but required, with upstream's variants, in both forms (as upstream's serde). */
  windowsSandboxLevel: Type.Union(["disabled", "restricted-token", "elevated", "mxc"].map((level) => Type.Literal(level))),
  windowsSandboxProxySettingsMode: Opt(Type.String({ maxLength: 64 })),
  /** Upstream's older Landlock pipeline; bubblewrap is the only one here. */
  useLegacyLandlock: Opt(Type.Boolean()),
};

/** serde names the struct when a sandbox is not an object (`expected struct WireFileSystemSandboxContext`), for process/start and fs/* alike. */
const SANDBOX_STRUCT = { serde: "struct WireFileSystemSandboxContext" };

/** `process/start`'s `sandbox`. */
export const FileSystemSandboxContextSchema = Type.Object(SandboxContextFields, SANDBOX_STRUCT);

/**
 * The form every `fs/*` call carries (newer clients send it with every one): the policy's cwd and
 * workspace roots move into `policyContext`; the top-level ones are legacy.
 */
export const WireFileSystemSandboxContextSchema = Type.Object({
  ...SandboxContextFields,
  policyContext: Opt(
    Type.Object({
      cwd: Opt(SandboxPathUri),
      workspaceRoots: Opt(Type.Array(SandboxPathUri, { maxItems: MAX_ENTRIES })),
    }),
  ),
}, SANDBOX_STRUCT);

/**
 * Extension for `environment/info`: whether this executor can enforce a
 * sandbox, and when it cannot, why (bubblewrap missing, user namespaces off).
 */
export const SandboxSupportSchema = Type.Object({
  /** The `sandboxType` a sandboxed `process/start` reports, or "none" when none can be enforced. */
  sandboxType: Type.Union([Type.Literal("linuxSeccomp"), Type.Literal("none")]),
  unavailableReason: Type.Optional(Type.String()),
});

export type NetworkSandboxPolicy = Static<typeof NetworkSandboxPolicySchema>;
export type FileSystemAccessMode = Static<typeof FileSystemAccessModeSchema>;
export type FileSystemSpecialPath = Static<typeof FileSystemSpecialPathSchema>;
export type FileSystemPath = Static<typeof FileSystemPathSchema>;
export type FileSystemSandboxEntry = Static<typeof FileSystemSandboxEntrySchema>;
export type PermissionProfile = Static<typeof PermissionProfileSchema>;
export type FileSystemSandboxContext = Static<typeof FileSystemSandboxContextSchema>;
export type WireFileSystemSandboxContext = Static<typeof WireFileSystemSandboxContextSchema>;
export type SandboxSupport = Static<typeof SandboxSupportSchema>;
