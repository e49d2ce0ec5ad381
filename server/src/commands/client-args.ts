/**
 * Argument parsing shared by the client commands (exec, ps, attach, mcp):
 * `--url`, `--token`, `--token-file`, `--session` with their EXECMUX_*
 * equivalents, and command-specific flags.
 */
import { readFileSync } from "node:fs";
import { connect, type ConnectOptions, type ExecmuxClient } from "@execmux/client";
import { ConfigError } from "../config.js";

export interface ClientArgs {
  url: string;
  token: string | undefined;
  session: string | undefined;
  /** Flags the command declared, by name. */
  flags: Map<string, string[]>;
  /** Everything else, in order (after `--`, everything). */
  rest: string[];
}

export const DEFAULT_URL = "ws://127.0.0.1:7373";

/**
 * `spec` maps each command flag to whether it takes a value (`-e K=V`,
 * `--cwd DIR`) or is a switch (`--tty`).
 */
export function parseClientArgs(argv: readonly string[], env: NodeJS.ProcessEnv, spec: Record<string, "value" | "switch">): ClientArgs {
  const flags = new Map<string, string[]>();
  const rest: string[] = [];
  const common: Record<string, string | undefined> = {
    url: env.EXECMUX_URL,
    token: env.EXECMUX_TOKEN,
    "token-file": env.EXECMUX_TOKEN_FILE,
    session: env.EXECMUX_SESSION,
  };
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (argument === "--") {
      rest.push(...argv.slice(index + 1));
      break;
    }
    const [name, inline] = argument.startsWith("--") && argument.includes("=") ? argument.split(/=(.*)/s, 2) : [argument, undefined];
    const key = name!.replace(/^--?/, "");
    if (["url", "token", "token-file", "session"].includes(key) && name!.startsWith("--")) {
      const value = inline ?? argv[++index];
      if (value === undefined) throw new ConfigError(`${name} needs a value`);
      common[key] = value;
      continue;
    }
    const kind = spec[name!];
    if (!kind) {
      if (name!.startsWith("-")) throw new ConfigError(`unknown option ${name}`);
      rest.push(argument);
      continue;
    }
    const value = kind === "switch" ? "true" : (inline ?? argv[++index]);
    if (value === undefined) throw new ConfigError(`${name} needs a value`);
    flags.set(name!, [...(flags.get(name!) ?? []), value]);
  }
  const token = common.token || (common["token-file"] ? readTokenFile(common["token-file"]) : undefined);
  return { url: common.url ?? DEFAULT_URL, token, session: common.session || undefined, flags, rest };
}

/** The first token of a token file (the daemon's format: one per line, # comments). */
function readTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read the token file ${path}: ${(error as Error).message}`);
  }
  const token = text.split(/\r?\n/).map((line) => line.trim()).find((line) => line !== "" && !line.startsWith("#"));
  if (!token) throw new ConfigError(`the token file ${path} holds no token`);
  return token;
}

/** Connects as the command line asked (`--url`, `--token`), with the command's own options. */
export function connectWith(args: ClientArgs, options: ConnectOptions = {}): Promise<ExecmuxClient> {
  return connect(args.url, { clientName: "execmux-cli", ...(args.token ? { token: args.token } : {}), ...options });
}
