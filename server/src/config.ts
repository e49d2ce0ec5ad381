/**
 * Reading the daemon's settings (config-schema.ts has them all). Each can be
 * given in a JSON config file (`--config FILE`, `{"retainedBytes": 2097152}`),
 * as an environment variable (`EXECMUX_RETAINED_BYTES=2097152`) or as a flag
 * (`--retained-bytes 2097152`); later ones win. The schema's validator
 * (compiled at build time) checks the result once at start-up, and a bad
 * value stops the daemon with the option's name.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { ErrorObject } from "ajv";
import type { Config, ConfigKey } from "./config-schema.js";
import { configSchema, validateConfig } from "./generated/config.js";
import { stateDirectoryPaths } from "./host/state-directory.js";

export type { Config, ConfigKey } from "./config-schema.js";

/** A setting's schema, as the generated JSON has it. */
interface OptionSchema {
  readonly default: unknown;
  readonly description: string;
  readonly type?: string;
}
const ConfigSchema = configSchema as { readonly properties: Readonly<Record<ConfigKey, OptionSchema>> };

const kebab = (key: string) => key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
const envName = (key: string) => `EXECMUX_${key.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase()}`;

export const configKeys = Object.keys(ConfigSchema.properties) as ConfigKey[];

/**
 * What each setting's value is, as far as sandboxes care. "daemon-file": a
 * file or directory the daemon reads a secret from or keeps to itself (token
 * files, shared secrets, keys, the config file, its state); every sandbox
 * hides it, whatever the profile grants (daemonFiles). Every setting is
 * listed, so a new one cannot be added without saying which it is.
 */
const VALUE_KINDS = {
  config: "daemon-file",
  listen: "setting",
  retainedBytes: "setting",
  closedRetentionMs: "setting",
  processContainment: "setting",
  spawnerPidNamespace: "setting",
  killGraceMs: "setting",
  sessionTtlMs: "setting",
  maxSessionTtlMs: "setting",
  maxLastingSessionsPerClient: "setting",
  maxObserversPerSession: "setting",
  observerTokenFile: "daemon-file",
  pingIntervalMs: "setting",
  pingTimeoutMs: "setting",
  socketHighWaterBytes: "setting",
  processQueueBytes: "setting",
  sharedAckWindowBytes: "setting",
  replyQueueBytes: "setting",
  pollAfterInputMicros: "setting",
  maxMessageBytes: "setting",
  token: "setting",
  tokenFile: "daemon-file",
  wsAuth: "setting",
  wsTokenFile: "daemon-file",
  wsTokenSha256: "setting",
  wsSharedSecretFile: "daemon-file",
  wsIssuer: "setting",
  wsAudience: "setting",
  wsMaxClockSkewSeconds: "setting",
  allowedOrigins: "setting",
  allowedHosts: "setting",
  basePath: "setting",
  insecureNoAuth: "setting",
  tlsCert: "daemon-file",
  tlsKey: "daemon-file",
  metricsNeedToken: "setting",
  maxSessions: "setting",
  maxSessionsPerClient: "setting",
  maxConnectionsPerClient: "setting",
  maxNewConnectionsPerSecond: "setting",
  maxDetachedSessions: "setting",
  maxProcessesPerSession: "setting",
  maxProcesses: "setting",
  maxClosedProcessesPerSession: "setting",
  maxStdinBufferBytes: "setting",
  maxRetainedBytesTotal: "setting",
  maxArgvEnvBytes: "setting",
  maxRequestsPerSecond: "setting",
  maxLongPolls: "setting",
  maxHttpRequests: "setting",
  maxHttpBodyBytes: "setting",
  maxHttpBodyBytesTotal: "setting",
  maxHttpBodyBytesPerClient: "setting",
  maxDescriptors: "setting",
  maxDescriptorsPerClient: "setting",
  maxPidsPerSession: "setting",
  handshakeTimeoutMs: "setting",
  idleTimeoutMs: "setting",
  processHost: "setting",
  stateDirectory: "daemon-file",
  logPretty: "setting",
  logLevel: "setting",
} as const satisfies Record<ConfigKey, "setting" | "daemon-file">;

/**
 * Every file and directory the configuration names for the daemon alone (see
 * VALUE_KINDS), absolute (the sandbox resolves symlinks): the state
 * directory where it is when not configured.
 */
export function daemonFiles(config: Config): string[] {
  return configKeys.flatMap((key) => {
    if (VALUE_KINDS[key] !== "daemon-file") return [];
    if (key === "stateDirectory") return stateDirectoryPaths(config.stateDirectory);
    const value = config[key];
    return typeof value === "string" && value !== "" ? [resolve(value)] : [];
  });
}
export const flagOf = (key: ConfigKey) => `--${kebab(key)}`;
export const envOf = (key: ConfigKey) => envName(key);

export class ConfigError extends Error {}

/** A JSON config file (`--config FILE` or EXECMUX_CONFIG): an object of the same options, camelCase. */
function readConfigFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path} must hold a JSON object`);
  }
  for (const key of Object.keys(parsed)) {
    if (!configKeys.includes(key as ConfigKey) || key === "config") throw new ConfigError(`unknown option "${key}" in config file ${path}`);
  }
  return parsed as Record<string, unknown>;
}

/** `--config FILE` / `--config=FILE` taken out of argv, with the rest. */
function splitConfigFlag(argv: readonly string[]): { file: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let file: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (argument === "--config") file = argv[++index];
    else if (argument.startsWith("--config=")) file = argument.slice("--config=".length);
    else rest.push(argument);
  }
  return { file, rest };
}

/**
 * Builds the configuration from defaults, a config file, the environment and
 * flags, each overriding the one before. Unknown flags and file keys are an
 * error, so a typo never silently falls back to a default.
 */
export function loadConfig(
  argvWithConfig: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  overrides: Partial<Config> = {},
): Config {
  const { file, rest: argv } = splitConfigFlag(argvWithConfig);
  const configFile = file ?? env.EXECMUX_CONFIG;
  const raw: Record<string, unknown> = configFile ? readConfigFile(configFile) : {};
  const byFlag = new Map(configKeys.map((key) => [flagOf(key), key]));
  for (const key of configKeys) {
    const value = env[envOf(key)];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    const [flag, inline] = argument.includes("=") ? argument.split(/=(.*)/s, 2) : [argument, undefined];
    const key = byFlag.get(flag!);
    if (!key) throw new ConfigError(`unknown option ${flag}`);
    // A boolean flag alone means true: `--insecure-no-auth`.
    const isBoolean = (ConfigSchema.properties[key] as { type?: string }).type === "boolean";
    const next = argv[index + 1];
    if (isBoolean && inline === undefined && (next === undefined || next.startsWith("--"))) {
      raw[key] = true;
      continue;
    }
    const value = inline ?? argv[++index];
    if (value === undefined) throw new ConfigError(`option ${flag} needs a value`);
    raw[key] = value;
  }
  Object.assign(raw, overrides);
  // The file actually read, whatever else named one: every sandbox hides it (daemonFiles).
  raw.config = configFile ?? "";
  if (!validateConfig(raw)) throw new ConfigError(`invalid configuration: ${describeErrors(validateConfig.errors ?? [], raw).join("; ")}`);
  return raw as Config;
}

/**
 * One sentence per bad option. ajv reports a choice of literals (a union) as
 * one "must be equal to constant" per literal plus an "anyOf" summary; those
 * become a single "must be one of ...".
 */
function describeErrors(errors: readonly ErrorObject[], raw: Record<string, unknown>): string[] {
  const byOption = new Map<string, ErrorObject[]>();
  for (const error of errors) byOption.set(error.instancePath, [...(byOption.get(error.instancePath) ?? []), error]);
  return [...byOption].map(([path, optionErrors]) => {
    const key = path.replace(/^\//, "") as ConfigKey;
    const name = key ? `${flagOf(key)} (${envOf(key)})` : "configuration";
    const got = key && key in raw ? ` (got ${JSON.stringify(raw[key])})` : "";
    const allowed = optionErrors.flatMap((error) =>
      error.keyword === "const" ? [(error.params as { allowedValue: unknown }).allowedValue] : error.keyword === "enum" ? (error.params as { allowedValues: unknown[] }).allowedValues : [],
    );
    if (allowed.length > 0) return `${name} must be one of ${allowed.map((value) => JSON.stringify(value)).join(", ")}${got}`;
    const reasons = [...new Set(optionErrors.map((error) => error.message ?? "is invalid"))];
    return `${name} ${reasons.join(" and ")}${got}`;
  });
}

/** `--listen stdio` (or `stdio://`, as upstream also accepts): stdin and stdout instead of a socket. */
export function isStdioListen(listen: string): boolean {
  return listen === "stdio" || listen === "stdio://";
}

/** "ws://127.0.0.1:7373" -> host and port; IPv6 hosts in brackets. */
export function parseListen(listen: string): { host: string; port: number } {
  let url: URL;
  try {
    url = new URL(listen);
  } catch {
    throw new ConfigError(`--listen must look like ws://IP:PORT, got ${listen}`);
  }
  const port = url.port === "" ? 7373 : Number(url.port);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!host) throw new ConfigError(`--listen must name a host, got ${listen}`);
  return { host, port };
}

/** The README's configuration table, made from the schema (a test keeps the README in step). */
export function configMarkdownTable(): string {
  const rows = configKeys.map((key) => {
    const schema = ConfigSchema.properties[key] as { default: unknown; description: string };
    return `| \`${flagOf(key)}\` | \`${envOf(key)}\` | \`${JSON.stringify(schema.default)}\` | ${schema.description} |`;
  });
  return ["| flag | environment | default | meaning |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

export function describeOptions(): string {
  return configKeys
    .map((key) => {
      const schema = ConfigSchema.properties[key] as { default: unknown; description: string };
      return `  ${flagOf(key).padEnd(22)} ${envOf(key).padEnd(30)} default ${JSON.stringify(schema.default)}\n      ${schema.description}`;
    })
    .join("\n");
}
