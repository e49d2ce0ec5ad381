/**
 * EXECMUX_* environment variables nobody reads. A typo in one is otherwise
 * silent, and some typos are dangerous: `EXECMUX_TOKN=...` starts a daemon
 * without authentication.
 */
import { configKeys, envOf } from "./config.js";

/** Variables read outside the daemon's configuration schema. */
const OTHER_VARIABLES = [
  "EXECMUX_URL", // client commands (commands/client-args.ts)
  "EXECMUX_SESSION",
  "EXECMUX_SANDBOX_ID", // through agent-sandbox's router (commands/client-args.ts)
  "EXECMUX_SANDBOX_NAMESPACE",
  "EXECMUX_SANDBOX_PORT",
  "EXECMUX_ROUTER_TOKEN",
  "EXECMUX_ROUTER_TOKEN_FILE",
  "EXECMUX_DEBUG", // stack traces on errors (cli.ts)
];

const PREFIX = "EXECMUX_";

export function knownVariables(): string[] {
  return [...configKeys.map(envOf), ...OTHER_VARIABLES];
}

/** Edit distance, for "did you mean": names are short, so the quadratic table is fine. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** One warning sentence per unknown EXECMUX_* variable set in `env`, with the closest known name if one is near. */
export function unknownVariableWarnings(env: Readonly<Record<string, string | undefined>>): string[] {
  const known = knownVariables();
  return Object.keys(env)
    .filter((name) => name.startsWith(PREFIX) && !known.includes(name))
    .sort()
    .map((name) => {
      const closest = known
        .map((candidate) => ({ candidate, distance: distance(name, candidate) }))
        .sort((a, b) => a.distance - b.distance)[0];
      const hint = closest && closest.distance <= 3 ? ` (did you mean ${closest.candidate}?)` : "";
      return `unknown environment variable ${name} is ignored${hint}`;
    });
}
