/**
 * process/start's network fields: `managedNetwork` (a proxy the client runs
 * and already put into `env`) and `networkProxy` (upstream's
 * RemoteNetworkProxyLaunchConfig: the executor starts a proxy of its own for
 * the process and enforces the domain policy in it). Written from what the
 * Codex 0.171 agent sends and what its exec-server accepts: fields serde
 * requires are required here, `Option`s take null, plain booleans with a
 * default (`transparentTcp`) may be absent but not null.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Opt, Unsigned } from "./common.js";

/** More than any real policy; bounds the work one start can ask for. */
export const NETWORK_POLICY_MAX_ENTRIES = 1024;
const PATTERN_MAX_LENGTH = 512;

/** `none` leaves the host to the other entries (upstream's NetworkDomainPermission). */
export const NetworkPermissionSchema = Type.Union([Type.Literal("none"), Type.Literal("allow"), Type.Literal("deny")]);

/** serde names the unix socket map's struct in its errors, and the domain map as a plain map. */
const PermissionMap = (struct?: string) =>
  Type.Record(Type.String({ maxLength: PATTERN_MAX_LENGTH }), NetworkPermissionSchema, {
    maxProperties: NETWORK_POLICY_MAX_ENTRIES,
    ...(struct ? { serde: `struct ${struct}` } : {}),
  });

/** `managedNetwork`: the client's own proxy, reached on these loopback ports. */
export const ManagedNetworkSchema = Type.Object({
  loopbackPorts: Opt(Type.Array(Unsigned("u16"), { maxItems: 1024 })),
  allowLocalBinding: Opt(Type.Boolean()),
  allowUnixSockets: Opt(Type.Array(Type.String(), { maxItems: 1024 })),
  dangerouslyAllowAllUnixSockets: Opt(Type.Boolean()),
  /** Route every TCP connection through the proxy; only an executor-local proxy can (refused otherwise, as upstream). */
  transparentTcp: Type.Optional(Type.Boolean()),
});

const ProviderList = (maxLength: number) => Opt(Type.Array(Type.String({ maxLength }), { maxItems: 64 }));

/** How a request carries a custom provider's credential (upstream's CredentialAuthMethod). */
export const CredentialAuthMethodSchema = Type.Union([Type.Literal("bearer"), Type.Literal("token"), Type.Literal("basic"), Type.Literal("header")]);

/**
 * One custom credential provider (upstream's CredentialProviderConfig, which
 * denies unknown fields): the variables it masks (`env`), what its
 * credentials look like (`patterns`, regular expressions), where their real
 * value may go (`url_prefixes`, or the URL in the variable
 * `url_prefix_from_env` names) and how requests carry it (`auth`, default
 * bearer; `header` and `prefix` for header authentication). The rest of the
 * checks (server/src/network-proxy/custom-providers.ts) need the patterns compiled.
 */
export const CredentialProviderConfigSchema = Type.Object(
  {
    env: ProviderList(PATTERN_MAX_LENGTH),
    /** Upstream refuses a pattern over 2048 bytes with its own words; the schema only bounds the request. */
    patterns: ProviderList(8192),
    url_prefixes: ProviderList(2048),
    url_prefix_from_env: Opt(Type.String({ maxLength: PATTERN_MAX_LENGTH })),
    auth: Opt(Type.Array(CredentialAuthMethodSchema, { maxItems: 16 })),
    header: Opt(Type.String({ maxLength: PATTERN_MAX_LENGTH })),
    prefix: Opt(Type.String({ maxLength: PATTERN_MAX_LENGTH })),
  },
  { additionalProperties: false, serde: "struct CredentialProviderConfig" },
);

/** The policy the executor-local proxy enforces (upstream's RemoteNetworkProxyConfig). */
export const RemoteNetworkProxyConfigSchema = Type.Object(
  {
    enabled: Type.Boolean(),
    enableSocks5: Type.Boolean(),
    enableSocks5Udp: Type.Boolean(),
    allowUpstreamProxy: Type.Boolean(),
    dangerouslyAllowAllUnixSockets: Type.Boolean(),
    /** `limited`: only GET, HEAD and OPTIONS; no CONNECT, no SOCKS5. */
    mode: Type.Union([Type.Literal("limited"), Type.Literal("full")]),
    /** Host patterns: `example.com`, `*.example.com` (subdomains), `**.example.com` (both), `*` (allow only). */
    domains: Opt(PermissionMap()),
    /** Absolute socket paths (proxied through `x-unix-socket` upstream, on macOS only). */
    unixSockets: Opt(PermissionMap("NetworkUnixSocketPermissions")),
    allowLocalBinding: Type.Boolean(),
    transparentTcp: Type.Optional(Type.Boolean()),
    /**
     * Upstream's credential broker: the process sees placeholders for the
     * executor's own GitHub and OpenAI credentials, and the proxy puts the
     * real value back into requests to their hosts only (network-proxy/credential-broker.ts).
     */
    credentialMasking: Type.Optional(Type.Boolean()),
    /** Custom providers, by name (capability credentialMaskingCustomProviders); used only with credentialMasking. */
    credentialProviders: Opt(Type.Record(Type.String({ maxLength: PATTERN_MAX_LENGTH }), CredentialProviderConfigSchema, { maxProperties: 64 })),
  },
  { serde: "struct RemoteNetworkProxyConfig" },
);

const AuditText = Opt(Type.String({ maxLength: 1024 }));

/** Who the traffic is for; upstream records it with its decisions. Accepted, not interpreted. */
export const NetworkProxyAuditMetadataSchema = Type.Object(
  {
    conversationId: AuditText,
    appVersion: AuditText,
    userAccountId: AuditText,
    authMode: AuditText,
    originator: AuditText,
    userEmail: AuditText,
    terminalType: AuditText,
    model: AuditText,
    slug: AuditText,
  },
  { serde: "struct NetworkProxyAuditMetadata" },
);

/** `networkProxy` (upstream's RemoteNetworkProxyLaunchConfig). */
export const RemoteNetworkProxyLaunchConfigSchema = Type.Object(
  {
    proxy: RemoteNetworkProxyConfigSchema,
    auditMetadata: Opt(NetworkProxyAuditMetadataSchema),
    environmentId: Opt(Type.String({ maxLength: 1024 })),
    executionId: Opt(Type.String({ maxLength: 1024 })),
    /**
     * When set, a host the policy does not list is put to the client as a
     * `network/policyRequest` and waits this long for its answer (domain review).
     */
    policyDecisionTimeoutMs: Opt(Unsigned("u64")),
  },
  { serde: "struct RemoteNetworkProxyLaunchConfig" },
);

export type NetworkPermission = Static<typeof NetworkPermissionSchema>;
export type ManagedNetwork = Static<typeof ManagedNetworkSchema>;
export type RemoteNetworkProxyConfig = Static<typeof RemoteNetworkProxyConfigSchema>;
export type RemoteNetworkProxyLaunchConfig = Static<typeof RemoteNetworkProxyLaunchConfigSchema>;
