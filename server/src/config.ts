/**
 * Every daemon setting, in one schema. Each can be given in a JSON config
 * file (`--config FILE`, `{"retainedBytes": 2097152}`), as an environment
 * variable (`EXECMUX_RETAINED_BYTES=2097152`) or as a flag
 * (`--retained-bytes 2097152`); later ones win. ajv checks the result once at
 * start-up, and a bad value stops the daemon with the option's name.
 */
import { Type, type Static } from "@sinclair/typebox";
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";

export const ConfigSchema = Type.Object(
  {
    listen: Type.String({
      default: "ws://127.0.0.1:7373",
      pattern: "^wss?://",
      description: "Address to listen on, ws://IP:PORT (port 0 picks a free port).",
    }),
    retainedBytes: Type.Integer({
      default: 1024 * 1024,
      minimum: 1,
      description: "Output retained per process for reads and resume; the oldest is evicted past this.",
    }),
    closedRetentionMs: Type.Integer({
      default: 30_000,
      minimum: 0,
      description: "How long a closed process stays readable before its id is freed.",
    }),
    killGraceMs: Type.Integer({
      default: 2_000,
      minimum: 0,
      description: "After process/terminate's SIGTERM, how long until SIGKILL.",
    }),
    sessionTtlMs: Type.Integer({
      default: 60_000,
      minimum: 0,
      description: "How long a session without a connection lives (processes keep running) before it is killed.",
    }),
    pingIntervalMs: Type.Integer({
      default: 15_000,
      minimum: 10,
      description: "How often every connection is pinged, so a half-open socket is noticed and its session freed for resume.",
    }),
    pingTimeoutMs: Type.Integer({
      default: 10_000,
      minimum: 10,
      description: "A connection that has not answered a ping within this is dropped (its session detaches).",
    }),
    socketHighWaterBytes: Type.Integer({
      default: 1024 * 1024,
      minimum: 1024,
      description: "Flow control: output waits in the daemon (per process, round-robin) while a socket buffers more than this.",
    }),
    processQueueBytes: Type.Integer({
      default: 256 * 1024,
      minimum: 1024,
      description: "Flow control: a process whose unsent output passes this is paused (it blocks on write) until the client catches up.",
    }),
    sharedAckWindowBytes: Type.Integer({
      default: 64 * 1024,
      minimum: 1024,
      description:
        "Flow control, for clients that acknowledge output: while more than one process of a socket is sending output, each may have at most this much unacknowledged (less if the client's own window is smaller), so one flooding process cannot queue far ahead of another's echo.",
    }),
    replyQueueBytes: Type.Integer({
      default: 4 * 1024 * 1024,
      minimum: 64 * 1024,
      description:
        "Flow control for replies: while a connection has more than this in replies the client has not taken, the daemon reads no further frames from it (they wait in the client's socket) until it has taken half, and process/read answers with less output (at least one chunk).",
    }),
    pollAfterInputMicros: Type.Integer({
      default: 200,
      minimum: 0,
      maximum: 10_000,
      description:
        "While input arrives less than 1 ms apart (a client exchanging messages with a process quickly), keep polling this many microseconds after each write instead of sleeping, so the answer and the next message are read without waiting for an idle CPU to wake. 0: off.",
    }),
    maxMessageBytes: Type.Integer({
      default: 16 * 1024 * 1024,
      minimum: 1024,
      description: "Largest WebSocket message accepted; a larger one closes the socket with 1009.",
    }),
    token: Type.String({
      default: "",
      description:
        "Bearer token clients must present. Empty: no authentication (refused on a non-loopback address). Give it as EXECMUX_TOKEN or in --token-file: on the command line every local user can read it (ps, /proc).",
    }),
    tokenFile: Type.String({
      default: "",
      description: "File with one accepted token per line (# comments allowed); re-read on SIGHUP and when it changes, so tokens rotate without a restart.",
    }),
    allowedOrigins: Type.String({
      default: "",
      description: "Comma-separated browser Origins allowed to connect (e.g. https://console.example.com), or * for any. A page served by the daemon itself (same scheme, host and port) is always allowed.",
    }),
    allowedHosts: Type.String({
      default: "",
      description:
        "Comma-separated names the daemon answers to in the Host header besides IP addresses, localhost, *.localhost and the --listen host (e.g. execmux.internal, *.example.com), or * for any; other names get 403, which stops DNS rebinding. Checked when no token is required, or whenever this is set.",
    }),
    insecureNoAuth: Type.Boolean({
      default: false,
      description: "Allow listening on a non-loopback address without a token. Anyone who can reach the port can run commands.",
    }),
    tlsCert: Type.String({ default: "", description: "PEM certificate file: serve wss:// (with --tls-key)." }),
    tlsKey: Type.String({ default: "", description: "PEM private key file for --tls-cert." }),
    metricsNeedToken: Type.Boolean({
      default: true,
      description: "When tokens are configured, /metrics requires one too (/livez and /readyz never do).",
    }),
    maxSessions: Type.Integer({ default: 1000, minimum: 1, description: "Sessions at once (attached and detached)." }),
    maxSessionsPerClient: Type.Integer({
      default: 250,
      minimum: 1,
      description:
        "Sessions one client (one token from one address; without tokens, one address) may hold. Past it, the client's own oldest detached session expires to make room; if all are attached, the new one is refused.",
    }),
    maxConnectionsPerClient: Type.Integer({
      default: 300,
      minimum: 1,
      description: "WebSocket connections one client (as for --max-sessions-per-client) may have open; more get HTTP 429.",
    }),
    maxDetachedSessions: Type.Integer({ default: 200, minimum: 0, description: "Sessions kept without a connection at once; past this a new disconnect expires the oldest detached session of the client that has the most." }),
    maxProcessesPerSession: Type.Integer({ default: 256, minimum: 1, description: "Processes one session may have (running or retained)." }),
    maxProcesses: Type.Integer({ default: 4096, minimum: 1, description: "Processes in the whole daemon (running or retained)." }),
    maxArgvEnvBytes: Type.Integer({ default: 1024 * 1024, minimum: 1024, description: "Total bytes of argv plus environment of one process/start." }),
    maxRequestsPerSecond: Type.Integer({
      default: 20000,
      minimum: 1,
      description:
        "Frames per second per connection, bursts up to twice this. Every frame counts (requests, notifications, malformed ones); a client sending faster is not read until it is within the rate again: slowed, not refused.",
    }),
    maxLongPolls: Type.Integer({ default: 64, minimum: 1, description: "Concurrent waiting process/read calls per connection." }),
    handshakeTimeoutMs: Type.Integer({ default: 10_000, minimum: 100, description: "A connection that has not sent initialize by then is closed." }),
    idleTimeoutMs: Type.Integer({ default: 1_800_000, minimum: 0, description: "A connection that sent nothing for this long is closed (its session detaches and can be resumed). 0: never." }),
    logPretty: Type.Boolean({ default: false, description: "Human-readable colored logs instead of JSON lines (still on stderr)." }),
    logLevel: Type.Union(
      ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((level) => Type.Literal(level)),
      { default: "info", description: "Log level (logs are JSON lines on stderr)." },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type ConfigKey = keyof Config;

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true });
const validateConfig = ajv.compile<Config>(ConfigSchema);

const kebab = (key: string) => key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
const envName = (key: string) => `EXECMUX_${key.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase()}`;

export const configKeys = Object.keys(ConfigSchema.properties) as ConfigKey[];
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
    if (!configKeys.includes(key as ConfigKey)) throw new ConfigError(`unknown option "${key}" in config file ${path}`);
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
  if (!validateConfig(raw)) {
    const messages = (validateConfig.errors ?? []).map((error) => {
      const key = error.instancePath.replace(/^\//, "") as ConfigKey;
      const name = key ? `${flagOf(key)} (${envOf(key)})` : "configuration";
      return `${name} ${error.message ?? "is invalid"}`;
    });
    throw new ConfigError(`invalid configuration: ${messages.join("; ")}`);
  }
  return raw as Config;
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
  const configLine = `  ${"--config FILE".padEnd(22)} ${"EXECMUX_CONFIG".padEnd(30)} default none\n      A JSON file with any of the options below (camelCase keys); env and flags override it.\n`;
  return configLine + configKeys
    .map((key) => {
      const schema = ConfigSchema.properties[key] as { default: unknown; description: string };
      return `  ${flagOf(key).padEnd(22)} ${envOf(key).padEnd(30)} default ${JSON.stringify(schema.default)}\n      ${schema.description}`;
    })
    .join("\n");
}
