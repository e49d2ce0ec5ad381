/**
 * `execmux token`: credentials for a fleet of sandboxes, each a daemon
 * started with upstream's `--ws-auth signed-bearer-token`.
 *
 *   mint          a token for one sandbox (audience, expiry, subject)
 *   sandbox-key   a sandbox's own key, derived from the fleet secret (run by
 *                 the pod's init container; see fleet/sandbox-key.ts)
 *   environments  Codex environments.toml entries for a list of claims
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { boundClaims, ClaimListError, environmentsToml, sandboxUrl } from "../fleet/codex-environments.js";
import { mintToken, parseDuration } from "../fleet/mint.js";
import { readSecretFile, sandboxKey, SecretError } from "../fleet/sandbox-key.js";
import { CommandError, UsageError } from "./command-error.js";
import { COMMAND_USAGE } from "./usage.js";

type Values = Record<string, string | boolean | undefined>;

function parse(argv: readonly string[], options: Record<string, "string" | "boolean">): Values {
  try {
    return parseArgs({
      args: [...argv],
      options: Object.fromEntries(Object.entries(options).map(([name, type]) => [name, { type }])),
      strict: true,
      allowPositionals: false,
    }).values as Values;
  } catch (error) {
    throw new UsageError(`${(error as Error).message} (see execmux token --help)`);
  }
}

function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required (see execmux token --help)`);
  return value;
}

function ttlOf(values: Values, fallback: string): number {
  const text = typeof values.ttl === "string" ? values.ttl : fallback;
  const seconds = parseDuration(text);
  if (seconds === undefined) throw new UsageError(`--ttl takes a duration like 90s, 15m, 12h or 7d, got ${text}`);
  return seconds;
}

const optional = (values: Values, name: string) => (typeof values[name] === "string" && values[name] !== "" ? (values[name] as string) : undefined);

/**
 * The key a token for `sandbox` is signed with: with --sandbox, that
 * sandbox's key derived from the fleet secret; with --audience alone, the
 * secret itself (one daemon with upstream's plain shared secret).
 */
function signingKey(values: Values): { key: Uint8Array; audience: string } {
  const secret = readSecretFile(required(values, "secret-file"));
  const sandbox = optional(values, "sandbox");
  if (sandbox === undefined) return { key: secret, audience: required(values, "audience") };
  if (values.audience !== undefined) throw new UsageError("--audience goes without --sandbox: a sandbox's token names the sandbox");
  const namespace = optional(values, "namespace") ?? "default";
  return { key: Buffer.from(sandboxKey(secret, namespace, sandbox), "utf8"), audience: sandbox };
}

async function mint(argv: readonly string[]): Promise<void> {
  const values = parse(argv, { "secret-file": "string", sandbox: "string", namespace: "string", audience: "string", subject: "string", issuer: "string", ttl: "string" });
  const { key, audience } = signingKey(values);
  const subject = optional(values, "subject");
  const issuer = optional(values, "issuer");
  const token = await mintToken({ key, audience, ttlSeconds: ttlOf(values, "1h"), ...(subject ? { subject } : {}), ...(issuer ? { issuer } : {}) });
  process.stdout.write(`${token}\n`);
}

function writeSandboxKey(argv: readonly string[]): void {
  const values = parse(argv, { "secret-file": "string", namespace: "string", sandbox: "string", out: "string" });
  const key = sandboxKey(readSecretFile(required(values, "secret-file")), required(values, "namespace"), required(values, "sandbox"));
  const out = optional(values, "out");
  if (out === undefined) {
    process.stdout.write(`${key}\n`);
    return;
  }
  try {
    // A pod restarted whole runs its init container again over the same emptyDir, where the last key is read-only.
    rmSync(out, { force: true });
    writeFileSync(out, `${key}\n`, { mode: 0o400 });
  } catch (error) {
    throw new CommandError(`cannot write the sandbox key to ${out}: ${(error as Error).message}`, 1);
  }
}

async function environments(argv: readonly string[]): Promise<void> {
  const values = parse(argv, {
    "secret-file": "string",
    router: "string",
    port: "string",
    subject: "string",
    issuer: "string",
    ttl: "string",
    default: "string",
    "no-local": "boolean",
  });
  const secret = readSecretFile(required(values, "secret-file"));
  const router = required(values, "router");
  if (!/^wss?:\/\//.test(router)) throw new UsageError(`--router must be a ws:// or wss:// URL (the router with its --path-routing-prefix), got ${router}`);
  const port = Number(optional(values, "port") ?? "8888");
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) throw new UsageError(`--port must be a port number, got ${values.port}`);
  let list: unknown;
  try {
    list = JSON.parse(readFileSync(0, "utf8"));
  } catch (error) {
    throw new UsageError(`expected \`kubectl get sandboxclaims -o json\` on stdin: ${(error as Error).message}`);
  }
  const { bound, unbound } = boundClaims(list);
  for (const name of unbound) process.stderr.write(`execmux token environments: skipped ${name}: not bound to a sandbox yet (status.sandbox.name)\n`);
  const defaultId = optional(values, "default");
  if (defaultId !== undefined && !bound.some((claim) => claim.id === defaultId)) throw new UsageError(`--default ${defaultId} is none of the bound claims`);
  const ttlSeconds = ttlOf(values, "12h");
  const subject = optional(values, "subject");
  const issuer = optional(values, "issuer");
  const entries = await Promise.all(
    bound.map(async (claim) => {
      const key = Buffer.from(sandboxKey(secret, claim.namespace, claim.sandbox), "utf8");
      const token = await mintToken({ key, audience: claim.sandbox, ttlSeconds, ...(subject ? { subject } : {}), ...(issuer ? { issuer } : {}) });
      return { id: claim.id, url: sandboxUrl(router, claim, port, token) };
    }),
  );
  process.stdout.write(environmentsToml({ entries, ...(defaultId ? { defaultId } : {}), ...(values["no-local"] ? { includeLocal: false } : {}) }));
}

const SUBCOMMANDS: Record<string, (argv: readonly string[]) => Promise<void> | void> = { mint, "sandbox-key": writeSandboxKey, environments };

export async function tokenCommand(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const run = name === undefined ? undefined : SUBCOMMANDS[name];
  if (!run) {
    process.stderr.write(COMMAND_USAGE.token);
    throw new UsageError(name === undefined ? "execmux token needs a subcommand" : `unknown token subcommand ${name}`);
  }
  try {
    await run(rest);
  } catch (error) {
    if (error instanceof SecretError || error instanceof ClaimListError) throw new CommandError(error.message, 1);
    throw error;
  }
}
