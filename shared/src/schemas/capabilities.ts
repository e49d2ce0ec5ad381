/**
 * Capability discovery: the plugins and skills on the executor, read there in
 * one request instead of many fs/* calls: upstream's (Codex exec-server
 * 0.171, asked of the binary) `capabilityRoots/discoverV1` (capability
 * capabilityDiscoverySandbox: it honours each root's `sandbox`), the files
 * under roots the client names; their meaning stays with the client.
 * And `capabilities/discoverV2` (capability capabilityDiscoveryV2): the
 * executor's own installed plugins and skills, parsed.
 */
import { Type, type Static } from "@sinclair/typebox";
import { WireFileSystemSandboxContextSchema } from "../sandbox-schemas.js";
import { Nullable, Opt, PathUriSchema } from "./common.js";

/**
 * More roots than upstream's 128 reach the daemon, which refuses them with
 * upstream's words (-32600); this only bounds what a frame may carry.
 */
const MAX_ROOTS_ON_THE_WIRE = 4096;

export const CapabilityRootDiscoverRequestSchema = Type.Object(
  {
    /** The client's name for the root, echoed back. */
    id: Type.String({ maxLength: 4096 }),
    path: PathUriSchema,
    /** Discovery reads only what this profile may read (upstream's FileSystemSandboxContext, as fs/* calls carry it). */
    sandbox: Opt(WireFileSystemSandboxContextSchema),
  },
  { serde: "struct WireCapabilityRootDiscoverRequest" },
);

export const CapabilityRootsDiscoverParamsSchema = Type.Object({
  roots: Type.Array(CapabilityRootDiscoverRequestSchema, { maxItems: MAX_ROOTS_ON_THE_WIRE }),
});

/** A file read whole, as text. */
export const CapabilityTextFileSchema = Type.Object({ path: PathUriSchema, contents: Type.String() });

export const DiscoveredPluginFilesSchema = Type.Object({
  /** The root's own manifest: `.codex-plugin/plugin.json`, else `.claude-plugin/`, else `.cursor-plugin/`. */
  manifest: CapabilityTextFileSchema,
  /** What the manifest's `mcpServers` names (`./path`), or `.mcp.json`; null when it declares them inline. */
  mcpConfig: Nullable(CapabilityTextFileSchema),
  /** What the manifest's `apps` names (`./path`). */
  appsConfig: Nullable(CapabilityTextFileSchema),
});

export const DiscoveredSkillFilesSchema = Type.Object({
  /** A `SKILL.md`. */
  instructions: CapabilityTextFileSchema,
  /** The `agents/openai.yaml` beside it. */
  metadata: Nullable(CapabilityTextFileSchema),
});

export const CapabilityRootDiscoverySchema = Type.Object({
  id: Type.String(),
  path: PathUriSchema,
  plugin: Nullable(DiscoveredPluginFilesSchema),
  /** Sorted by path. */
  skills: Type.Array(DiscoveredSkillFilesSchema),
  /** The manifest of the plugin the root is in (its own, or the nearest above it), then every plugin's below it. */
  namespaceManifests: Type.Array(CapabilityTextFileSchema),
  /** What could not be scanned or read; the rest is still reported. */
  warnings: Type.Array(Type.String()),
  /** Why nothing could be discovered under this root (missing, not a directory). */
  error: Nullable(Type.String()),
});

export const CapabilityRootsDiscoverResultSchema = Type.Object({ roots: Type.Array(CapabilityRootDiscoverySchema) });

export const DiscoverV2CapabilitiesParamsSchema = Type.Object(
  {
    /** Accepted and not used: upstream 0.171 discovers the same locations whatever it is. */
    cwd: PathUriSchema,
    /** What the discovery may read; only a profile that reads the whole disk is served (else refused). */
    sandbox: Opt(WireFileSystemSandboxContextSchema),
  },
  { serde: "struct DiscoverV2CapabilitiesRequest" },
);

/** `agents/openai.yaml`'s `dependencies.tools` entries and `policy`, as the skill declared them. */
export const SkillToolDependencySchema = Type.Object({
  type: Type.String(),
  value: Type.String(),
  description: Nullable(Type.String()),
  transport: Nullable(Type.String()),
  command: Nullable(Type.String()),
  url: Nullable(Type.String()),
  oauthCallbackPort: Nullable(Type.Integer()),
});
export const SkillDependenciesSchema = Type.Object({ tools: Type.Array(SkillToolDependencySchema) });
export const SkillPolicySchema = Type.Object({
  allowImplicitInvocation: Nullable(Type.Boolean()),
  products: Nullable(Type.Array(Type.String())),
});

const ExecutorSkillFields = {
  /** From the SKILL.md front matter; a plugin's skills are `<plugin>:<name>`. */
  name: Type.String(),
  description: Type.String(),
  /** The front matter's `metadata.short-description`. */
  shortDescription: Nullable(Type.String()),
  /** The SKILL.md itself. */
  path: PathUriSchema,
  dependencies: Nullable(SkillDependenciesSchema),
  policy: Nullable(SkillPolicySchema),
};

export const ExecutorSkillSchema = Type.Object(ExecutorSkillFields);

/** A skill outside any plugin, and the location it was found in. */
export const ExecutorStandaloneSkillSchema = Type.Object({
  ...ExecutorSkillFields,
  discoveryRoot: Type.Object({
    /** `codex-home-skills`, `user-agent-skills` or `system-skills`. */
    id: Type.String(),
    path: PathUriSchema,
  }),
});

export const ExecutorPluginSchema = Type.Object({
  /** `<name>@<marketplace>`, from where it is installed. */
  id: Type.String(),
  displayName: Type.String(),
  remotePluginId: Nullable(Type.String()),
  version: Type.String(),
  root: PathUriSchema,
  files: DiscoveredPluginFilesSchema,
  skills: Type.Array(ExecutorSkillSchema),
});

export const DiscoverV2CapabilitiesResultSchema = Type.Object({
  plugins: Type.Array(ExecutorPluginSchema),
  skills: Type.Array(ExecutorStandaloneSkillSchema),
  warnings: Type.Array(Type.String()),
});

export type CapabilityRootDiscoverRequest = Static<typeof CapabilityRootDiscoverRequestSchema>;
export type CapabilityTextFile = Static<typeof CapabilityTextFileSchema>;
export type DiscoveredPluginFiles = Static<typeof DiscoveredPluginFilesSchema>;
export type DiscoveredSkillFiles = Static<typeof DiscoveredSkillFilesSchema>;
export type CapabilityRootDiscovery = Static<typeof CapabilityRootDiscoverySchema>;
export type CapabilityRootsDiscoverResult = Static<typeof CapabilityRootsDiscoverResultSchema>;
export type SkillDependencies = Static<typeof SkillDependenciesSchema>;
export type SkillPolicy = Static<typeof SkillPolicySchema>;
export type ExecutorSkill = Static<typeof ExecutorSkillSchema>;
export type ExecutorStandaloneSkill = Static<typeof ExecutorStandaloneSkillSchema>;
export type ExecutorPlugin = Static<typeof ExecutorPluginSchema>;
export type DiscoverV2CapabilitiesResult = Static<typeof DiscoverV2CapabilitiesResultSchema>;
