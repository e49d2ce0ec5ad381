/** `environment/info` and `environment/status`: what the executor is and whether it is up. */
import { Type, type Static } from "@sinclair/typebox";
import { SandboxSupportSchema } from "../sandbox-schemas.js";
import { PathUriSchema } from "./common.js";

/**
 * Optional executor features a client must see `true` for before it sends
 * the request fields or methods behind them. execmux reports `false` for all
 * it does not implement, so an unmodified Codex never asks for them.
 */
export const EnvironmentCapabilitiesSchema = Type.Object({
  /** process/start's `networkProxy`: an executor-local proxy enforcing the domain policy (server/src/network-proxy/). */
  networkProxyLaunch: Type.Boolean(),
  /** `network/policyRequest`: hosts the policy leaves open are put to the client (networkProxy.policyDecisionTimeoutMs). */
  networkProxyReviewDomains: Type.Boolean(),
  /** `transparentTcp` in networkProxy.proxy and managedNetwork: every TCP connection goes through the proxy. */
  networkProxyTransparentTcp: Type.Boolean(),
  capabilityDiscoverySandbox: Type.Boolean(),
  capabilityDiscoveryV2: Type.Boolean(),
  environmentConfigRead: Type.Boolean(),
  httpHeaderEnvVars: Type.Boolean(),
  sandboxedFileStreaming: Type.Boolean(),
  shellSnapshotV2: Type.Boolean(),
  windowsMxc: Type.Boolean(),
  fsWatchMissing: Type.Boolean(),
  fileWriteStreaming: Type.Boolean(),
  credentialMasking: Type.Boolean(),
  /** Upstream reports it beside credentialMasking; execmux serves neither (docs/upstream-capabilities.md). */
  credentialMaskingCustomProviders: Type.Boolean(),
  /** A writable `/` keeps the standard devices (a fresh /dev) when the profile restricts anything below it, the host's /dev otherwise. */
  linuxRootWritePreservesDevices: Type.Boolean(),
  /** Approved (escalated) root writes keep devices and denied root-metadata symlink targets. */
  linuxApprovedRootWritePreservesRestrictions: Type.Boolean(),
});

export const EnvironmentInfoSchema = Type.Object({
  shell: Type.Object({ name: Type.String(), path: Type.String() }),
  executorVersion: Type.String(),
  /** The daemon's working directory (a file URI). */
  cwd: Type.Union([PathUriSchema, Type.Null()]),
  userHomeDir: Type.Optional(PathUriSchema),
  platformOs: Type.Optional(Type.String()),
  prependPathDirs: Type.Optional(Type.Array(PathUriSchema)),
  /** From TMPDIR, as upstream: empty when it is unset. */
  temporaryDirectories: Type.Optional(Type.Array(PathUriSchema)),
  tempDir: Type.Optional(PathUriSchema),
  capabilities: EnvironmentCapabilitiesSchema,
  /** Extension: whether a `sandbox` can be enforced here (bubblewrap), and if not, what is missing. */
  sandbox: Type.Optional(SandboxSupportSchema),
});

export const EnvironmentStatusResultSchema = Type.Object({ status: Type.Literal("ready") });

export type EnvironmentCapabilities = Static<typeof EnvironmentCapabilitiesSchema>;
export type EnvironmentInfo = Static<typeof EnvironmentInfoSchema>;
export type EnvironmentStatusResult = Static<typeof EnvironmentStatusResultSchema>;

/**
 * `environmentConfig/read` (capability environmentConfigRead): the executor's
 * own Codex configuration, cut down to the TOML key paths asked for (the
 * Codex agent asks for `mcp_servers`: the MCP servers it may start there).
 */
export const EnvironmentConfigReadParamsSchema = Type.Object({
  cwd: PathUriSchema,
  /** Each a key path (`["mcp_servers"]`, `["mcp_servers", "foo"]`); at least one path across both lists. */
  configPaths: Type.Array(Type.Array(Type.String())),
  requirementsPaths: Type.Array(Type.Array(Type.String())),
});

/** One source of configuration, with only the asked-for keys, as TOML text. */
export const EnvironmentConfigLayerSchema = Type.Object({
  /** `user (<path>)`, `project (<path>)`. */
  source: Type.String(),
  /** The directory the file is in: relative paths in it are relative to this. */
  baseDir: PathUriSchema,
  toml: Type.String(),
});
export const EnvironmentConfigLayersSchema = Type.Object({
  /** Lowest precedence first. */
  layers: Type.Array(EnvironmentConfigLayerSchema),
  /** Where a client inserts its cloud-managed layers among these. */
  cloudInsertionIndex: Type.Integer({ minimum: 0 }),
});
export const EnvironmentConfigReadResultSchema = Type.Object({
  userHomeDir: PathUriSchema,
  codexHomeDir: PathUriSchema,
  hostname: Type.String(),
  config: EnvironmentConfigLayersSchema,
  requirements: EnvironmentConfigLayersSchema,
});

export type EnvironmentConfigLayer = Static<typeof EnvironmentConfigLayerSchema>;
export type EnvironmentConfigReadResult = Static<typeof EnvironmentConfigReadResultSchema>;
