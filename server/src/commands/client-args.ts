/**
 * Argument parsing shared by the client commands (exec, ps, attach, mcp):
 * `--url`, `--token`, `--token-file`, `--session` with their EXECMUX_*
 * equivalents, `--takeover`, and command-specific flags.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { connect, ErrorCode, RpcRequestError, type ConnectOptions, type ExecmuxClient, type RouterRoute } from "@execmux/client";
import { unknownVariableWarnings } from "../unknown-variables.js";
import { CommandError, UsageError } from "./command-error.js";

export interface ClientArgs {
  url: string;
  token: string | undefined;
  session: string | undefined;
  /** `--sandbox-id` and the rest: the sandbox to reach through agent-sandbox's router at `url`. */
  router: RouterRoute | undefined;
  /** `--takeover`: take the session from a client that holds it. */
  takeover: boolean;
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
  for (const warning of unknownVariableWarnings(env)) process.stderr.write(`execmux: warning: ${warning}\n`);
  const flags = new Map<string, string[]>();
  const rest: string[] = [];
  let takeover = false;
  const common: Record<string, string | undefined> = {
    url: env.EXECMUX_URL,
    token: env.EXECMUX_TOKEN,
    "token-file": env.EXECMUX_TOKEN_FILE,
    session: env.EXECMUX_SESSION,
    "sandbox-id": env.EXECMUX_SANDBOX_ID,
    "sandbox-namespace": env.EXECMUX_SANDBOX_NAMESPACE,
    "sandbox-port": env.EXECMUX_SANDBOX_PORT,
    "router-token": env.EXECMUX_ROUTER_TOKEN,
    "router-token-file": env.EXECMUX_ROUTER_TOKEN_FILE,
  };
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (argument === "--") {
      rest.push(...argv.slice(index + 1));
      break;
    }
    if (argument === "--takeover") {
      takeover = true;
      continue;
    }
    const [name, inline] = argument.startsWith("--") && argument.includes("=") ? argument.split(/=(.*)/s, 2) : [argument, undefined];
    const key = name!.replace(/^--?/, "");
    if (COMMON_FLAGS.includes(key) && name!.startsWith("--")) {
      const value = inline ?? argv[++index];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
      common[key] = value;
      continue;
    }
    const kind = spec[name!];
    if (!kind) {
      if (name!.startsWith("-")) throw new UsageError(`unknown option ${name} (see --help)`);
      rest.push(argument);
      continue;
    }
    const value = kind === "switch" ? "true" : (inline ?? argv[++index]);
    if (value === undefined) throw new UsageError(`${name} needs a value`);
    flags.set(name!, [...(flags.get(name!) ?? []), value]);
  }
  const token = common.token || (common["token-file"] ? readTokenFile(common["token-file"]) : undefined);
  return { url: common.url ?? DEFAULT_URL, token, session: common.session || undefined, router: routeOf(common), takeover, flags, rest };
}

/** Flags every client command takes (each also an EXECMUX_* variable). */
const COMMON_FLAGS = ["url", "token", "token-file", "session", "sandbox-id", "sandbox-namespace", "sandbox-port", "router-token", "router-token-file"];

/** The router route the options name, or undefined without --sandbox-id. */
function routeOf(common: Record<string, string | undefined>): RouterRoute | undefined {
  const sandboxId = common["sandbox-id"] || undefined;
  const namespace = common["sandbox-namespace"] || undefined;
  const portText = common["sandbox-port"] || undefined;
  const routerToken = common["router-token"] || (common["router-token-file"] ? readTokenFile(common["router-token-file"]) : undefined);
  if (!sandboxId) {
    if (namespace || portText || routerToken) throw new UsageError("--sandbox-namespace, --sandbox-port and the router token need --sandbox-id");
    return undefined;
  }
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535)) throw new UsageError(`--sandbox-port must be a port number, got ${portText}`);
  return { sandboxId, ...(namespace ? { namespace } : {}), ...(port !== undefined ? { port } : {}), ...(routerToken ? { token: routerToken } : {}) };
}

/** The first token of a token file (the daemon's format: one per line, # comments). */
function readTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read the token file ${path}: ${(error as Error).message}`);
  }
  const token = text.split(/\r?\n/).map((line) => line.trim()).find((line) => line !== "" && !line.startsWith("#"));
  if (!token) throw new UsageError(`the token file ${path} holds no token`);
  return token;
}

/**
 * The name a command gives the daemon: shown to a second client that finds
 * the session taken, so a person can tell which terminal holds it.
 */
export const clientNameOf = (command: string) => `execmux ${command}, pid ${process.pid} on ${hostname()}`;

/**
 * Connects as the command line asked (`--url`, `--token`), with the command's
 * own options. A session another client holds is not taken from it unless
 * `takeover`: the error names that client instead.
 */
export async function connectWith(args: ClientArgs, options: ConnectOptions = {}): Promise<ExecmuxClient> {
  const { resume, ...rest } = options;
  const session = resume ?? (args.session ? { sessionId: args.session } : undefined);
  const takeover = args.takeover;
  try {
    return await connect(args.url, {
      clientName: clientNameOf("client"),
      ...(args.token ? { token: args.token } : {}),
      ...(args.router ? { router: args.router } : {}),
      ...rest,
      ...(session ? { resume: { ...session, takeover } } : {}),
    });
  } catch (error) {
    if (error instanceof RpcRequestError && error.code === ErrorCode.SessionAttached) {
      throw new CommandError(`${error.rpcMessage}; stop that client first, or pass --takeover to take the session from it`, 1);
    }
    if (error instanceof RpcRequestError && error.code === ErrorCode.InvalidRequest && session) {
      throw new CommandError(`no session ${session.sessionId} on ${args.url} (it ended, or expired after the daemon's --session-ttl-ms without a connection)`, 1);
    }
    throw error;
  }
}
