/**
 * `valueEnvVar` in an http/request header (capability httpHeaderEnvVars):
 * the value of an environment variable of the executor (the daemon's own
 * environment) appended to the header's `value`, so a client can send a
 * credential that lives on the executor (`value: "Bearer "`, `valueEnvVar:
 * "GITHUB_TOKEN"`) without ever holding it. As upstream 0.171, asked of the
 * binary: a name is looked up as written; a missing or empty variable is
 * -32602; and the credentials Codex itself runs on are never readable.
 *
 * execmux refuses more than upstream: every EXECMUX_* variable (its token,
 * its configuration, its process host's private channel), whatever a client
 * may otherwise read, because those belong to the daemon, not to the host
 * the client came to use.
 */
import { invalidParams } from "../../errors/rpc-error.js";

/** Upstream's refused names, compared without regard to case (asked of 0.171: `openai_api_key` is refused too). */
const CODEX_CREDENTIALS = new Set([
  "OPENAI_API_KEY",
  "CODEX_API_KEY",
  "CODEX_ACCESS_TOKEN",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "GOOGLE_APPLICATION_CREDENTIALS",
]);
const DAEMON_PREFIX = "EXECMUX_";

/** Whether a client may read this variable through a header. */
export function headerMayRead(variable: string): boolean {
  const upper = variable.toUpperCase();
  return !CODEX_CREDENTIALS.has(upper) && !upper.startsWith(DAEMON_PREFIX);
}

/** The variable's value for the header named `header`, or upstream's -32602 for why there is none. */
export function headerEnvValue(header: string, variable: string, env: NodeJS.ProcessEnv): string {
  if (!headerMayRead(variable)) throw invalidParams(`http/request header ${header} cannot use executor environment variable ${variable}`);
  const value = Object.hasOwn(env, variable) ? env[variable] : undefined;
  if (value === undefined) throw invalidParams(`http/request header ${header} requires executor environment variable ${variable}`);
  if (value === "") throw invalidParams(`http/request header ${header} requires a non-empty executor environment variable ${variable}`);
  return value;
}
