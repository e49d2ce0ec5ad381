/**
 * The child's environment, by upstream's rules: without a policy the child
 * gets exactly `env`; with one, the daemon's own environment is filtered by
 * the policy (inherit, default excludes, excludes, set, includeOnly, in that
 * order, as Codex's exec_env does) and `env` is laid over the result.
 */
import type { EnvMap, EnvPolicy } from "@execmux/shared";
import { GlobBudget, globMatcher } from "./glob.js";

/** What `inherit: "core"` keeps. */
const CORE_VARIABLES = new Set(["HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP"]);
/** Names that usually hold secrets, dropped unless `ignoreDefaultExcludes`. */
const DEFAULT_EXCLUDES = ["*KEY*", "*SECRET*", "*TOKEN*"];
/** The daemon's own settings (its token among them) never reach a child by inheritance. */
const DAEMON_PREFIX = "EXECMUX_";

/** `env` without the daemon's own EXECMUX_* settings (a token among them): what a helper process inherits. */
export function withoutDaemonSettings(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !name.toUpperCase().startsWith(DAEMON_PREFIX)) kept[name] = value;
  return kept;
}

/** Copies into a null-prototype object, so a key like `__proto__` is just a name. */
function copyEnv(source: Readonly<Record<string, string | undefined>> | null | undefined): Record<string, string> {
  const result = Object.create(null) as Record<string, string>;
  if (!source) return result;
  for (const name of Object.keys(source)) {
    const value = source[name];
    if (value !== undefined) result[name] = value;
  }
  return result;
}

/**
 * `cwd` is where the child runs: an inherited PWD names the directory the
 * daemon was started in, which programs that trust PWD (make, env, many
 * scripts) would take for theirs, so it is replaced, as a shell would.
 */
export function buildChildEnv(
  env: EnvMap | null | undefined,
  policy: EnvPolicy | null | undefined,
  daemonEnv: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Record<string, string> {
  if (!policy) return copyEnv(env);

  const inherited = copyEnv(daemonEnv);
  for (const name of Object.keys(inherited)) {
    if (name.toUpperCase().startsWith(DAEMON_PREFIX)) delete inherited[name];
  }
  if (inherited.PWD !== undefined) inherited.PWD = cwd;

  let result = Object.create(null) as Record<string, string>;
  for (const name of Object.keys(inherited)) {
    const keep = policy.inherit === "all" || (policy.inherit === "core" && CORE_VARIABLES.has(name));
    if (keep) result[name] = inherited[name]!;
  }

  // One budget for all of this request's patterns (GlobBudgetExceeded past it).
  const budget = new GlobBudget();
  const excluded = globMatcher([...(policy.ignoreDefaultExcludes ? [] : DEFAULT_EXCLUDES), ...(policy.exclude ?? [])], budget);
  for (const name of Object.keys(result)) {
    if (excluded(name)) delete result[name];
  }

  Object.assign(result, copyEnv(policy.set));

  if (policy.includeOnly && policy.includeOnly.length > 0) {
    const included = globMatcher(policy.includeOnly, budget);
    const filtered = Object.create(null) as Record<string, string>;
    for (const name of Object.keys(result)) {
      if (included(name)) filtered[name] = result[name]!;
    }
    result = filtered;
  }

  return Object.assign(result, copyEnv(env));
}
