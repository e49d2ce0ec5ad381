/**
 * A capture's output (scripts.ts) as a snapshot: the state text a replay
 * evaluates and the environment it restores, both bounded, the environment
 * filtered as upstream filters it. Anything malformed is a failed capture,
 * which the caller answers by running the command as it came.
 */
import type { EnvPolicy } from "@execmux/shared";
import { buildChildEnv } from "../process/env-policy.js";
import { withoutProxyEnvironment } from "../network-proxy/proxy-env.js";
import { END_MARKER, STATE_MARKER } from "./scripts.js";

/**
 * Upstream 0.171's bounds, found by bisection against it: the captured
 * environment at most 512 KiB, and so the state when it travels in
 * environment variables (as here it always does; upstream sources it from a
 * descriptor when it can, and then takes states up to its capture bound).
 */
export const MAX_ENVIRONMENT_BYTES = 512 * 1024;
export const MAX_STATE_BYTES = 512 * 1024;

export interface ShellSnapshot {
  /** Shell text: options, functions, aliases. */
  readonly state: string;
  /** Exported variables to lay over the process's environment. */
  readonly environment: Readonly<Record<string, string>>;
  /** What the snapshot holds in memory, for the cache's accounting. */
  readonly bytes: number;
}

export type ParseResult = { readonly snapshot: ShellSnapshot } | { readonly failure: string };

/**
 * Variables no child may inherit (upstream's NON_INHERITABLE_ENV_VARS, by
 * name regardless of case): credentials of Codex's own launch.
 */
const NON_INHERITABLE = new Set(
  ["CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN", "NODE_REPL_AUTH_TOKEN", "OPENAI_FEDERATION_RULE_ID", "OPENAI_IDENTITY_TOKEN_FILE", "OPENAI_WORKLOAD_IDENTITY_CONTEXT"],
);

export function isNonInheritable(name: string): boolean {
  return NON_INHERITABLE.has(name.toUpperCase());
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

function decode(bytes: Buffer): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * `cwd` only matters to the policy's PWD handling, and PWD is dropped
 * anyway: the process starts in its own cwd, not where the profile went.
 */
export function parseCapture(output: Buffer, policy: EnvPolicy | null | undefined, cwd: string): ParseResult {
  // The last markers: a startup file may print anything before the first, never a NUL inside the state.
  const end = output.lastIndexOf(END_MARKER);
  const start = end < 0 ? -1 : output.lastIndexOf(STATE_MARKER, end);
  if (start < 0) return { failure: "the capture printed no snapshot" };
  const body = output.subarray(start + STATE_MARKER.length, end);
  const stateEnd = body.indexOf(0);
  if (stateEnd < 0) return { failure: "the capture ended inside its state" };
  const state = decode(body.subarray(0, stateEnd));
  if (state === undefined) return { failure: "the captured state is not UTF-8" };
  const stateBytes = Buffer.byteLength(state);
  if (stateBytes > MAX_STATE_BYTES) return { failure: `the state takes ${stateBytes} bytes, over ${MAX_STATE_BYTES}` };
  const environmentBytes = body.subarray(stateEnd + 1);
  if (environmentBytes.length > MAX_ENVIRONMENT_BYTES) {
    return { failure: `the environment takes ${environmentBytes.length} bytes, over ${MAX_ENVIRONMENT_BYTES}` };
  }
  return { snapshot: { state, environment: filteredEnvironment(environmentBytes, policy, cwd), bytes: stateBytes + environmentBytes.length } };
}

function filteredEnvironment(bytes: Buffer, policy: EnvPolicy | null | undefined, cwd: string): Record<string, string> {
  let captured = Object.create(null) as Record<string, string>;
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0, start);
    if (end < 0) end = bytes.length;
    const entry = decode(bytes.subarray(start, end));
    start = end + 1;
    const equals = entry?.indexOf("=") ?? -1;
    if (entry === undefined || equals < 0) continue;
    captured[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  // A capture that ran under an executor-local proxy: its proxy settings name that start's proxy, not the next one's.
  if (captured.CODEX_NETWORK_PROXY_ACTIVE !== undefined) captured = withoutProxyEnvironment(captured);
  // The request's policy, over what the profile exported instead of the daemon's environment.
  const environment = policy ? buildChildEnv(undefined, { ...policy, inherit: "all" }, captured, cwd) : captured;
  delete environment.PWD;
  delete environment.OLDPWD;
  for (const name of Object.keys(environment)) if (isNonInheritable(name)) delete environment[name];
  return environment;
}
