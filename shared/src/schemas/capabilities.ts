/**
 * Capability discovery: the plugins and skills on the executor, read there in
 * one request instead of many fs/* calls: upstream's (Codex exec-server
 * 0.171, asked of the binary) `capabilityRoots/discoverV1` (capability
 * capabilityDiscoverySandbox: it honours each root's `sandbox`), the files
 * under roots the client names; their meaning stays with the client.
 * (`capabilities/discoverV2`, the executor's own installed plugins and
 * skills, is not served: docs/upstream-capabilities.md.)
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

export type CapabilityRootDiscoverRequest = Static<typeof CapabilityRootDiscoverRequestSchema>;
export type CapabilityTextFile = Static<typeof CapabilityTextFileSchema>;
export type DiscoveredPluginFiles = Static<typeof DiscoveredPluginFilesSchema>;
export type DiscoveredSkillFiles = Static<typeof DiscoveredSkillFilesSchema>;
export type CapabilityRootDiscovery = Static<typeof CapabilityRootDiscoverySchema>;
export type CapabilityRootsDiscoverResult = Static<typeof CapabilityRootsDiscoverResultSchema>;
