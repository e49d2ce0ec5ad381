/** The help texts of `execmux` and each of its commands. */
import { describeOptions } from "../config.js";

const CLIENT_OPTIONS = `Connection options (every client command):
  --url URL        the daemon (EXECMUX_URL, default ws://127.0.0.1:7373)
  --token-file FILE  a file whose first line is its bearer token (EXECMUX_TOKEN_FILE)
  --token TOKEN    its bearer token (EXECMUX_TOKEN; prefer the variable or
                   --token-file: a command line is readable by every local
                   user, ps and /proc)
  --session ID     a session to use instead of a new one (EXECMUX_SESSION)
  --takeover       take that session from another client holding it

Through Kubernetes agent-sandbox's sandbox-router (--url is the router's):
  --sandbox-id NAME        the sandbox (X-Sandbox-ID; EXECMUX_SANDBOX_ID); the
                           token then goes as a subprotocol, since the router
                           strips Authorization
  --sandbox-namespace NS   its namespace (EXECMUX_SANDBOX_NAMESPACE; router
                           default: default)
  --sandbox-port PORT      the daemon's port in the pod (EXECMUX_SANDBOX_PORT;
                           router default: 8888)
  --router-token-file FILE the router's own token, sent as Authorization
                           (EXECMUX_ROUTER_TOKEN or EXECMUX_ROUTER_TOKEN_FILE)`;

const CWD_RULE = `The remote working directory defaults to this shell's current directory when
the daemon is on this machine (a loopback --url), and to / otherwise; a
relative --cwd is resolved against that default.`;

export const COMMAND_USAGE = {
  serve: `Usage: execmux serve [options]

Runs the daemon. Prints its URL (one line) on stdout once listening; logs are
JSON lines on stderr. SIGTERM or SIGINT stops it and every process it started.
Sessions and processes live in a process host that outlives the daemon: after a
crash or SIGKILL, the same command finds them again and clients resume. SIGUSR2
hands them over on purpose (a restart, an upgrade): the daemon exits 0 and the
next one carries on.

Tokens: EXECMUX_TOKEN or --token-file (one per line, rotated without a
restart); avoid --token on a shared machine: a command line is readable by
every local user (ps, /proc).

Options (each also an environment variable; a config file, then the
environment, then flags, each overriding the one before):
${describeOptions()}
`,
  exec: `Usage: execmux exec [options] -- CMD [ARGS...]

Runs CMD on the daemon as if it were local: stdout and stderr stream apart,
stdin is forwarded (EOF closes it remotely), and it exits with CMD's exit code
(127 if CMD is not found, 126 if it cannot be executed). Ctrl-C and SIGTERM go to the remote process; while
the daemon is unreachable (or the previous one has gone unanswered for a
second) they end this command at once.

Options:
  -t, --tty        run CMD on a terminal (raw mode, follows window resizes)
  --cwd DIR        remote working directory
  -e, --env K=V    set an environment variable (repeatable)
  -d, --detach     start CMD and return at once, printing its session and
                   process. CMD runs until it ends; its session (and so its
                   exit status in execmux ps) stays an hour after that
  --ttl DURATION   with --detach, a limit instead: the session ends DURATION
                   (90s, 15m, 2h, 1d) after this command returns unless a
                   client holds it then, with CMD SIGTERMed if still running
  --sandbox MODE   confine CMD as Codex does, with bubblewrap: read-only, or
                   workspace-write (the remote cwd is the writable project)

${CWD_RULE}

${CLIENT_OPTIONS}
`,
  ps: `Usage: execmux ps [--session ID]

Lists your sessions (those of your token; with an observer token, every
session), each with whether a client holds it, how long it is kept, and its
processes: id, state, pid, exit code, start time and command. With --session,
that session's processes only. It never takes a session from its holder.

${CLIENT_OPTIONS}
`,
  attach: `Usage: execmux attach [--takeover] --session ID PROCESS

Replays what PROCESS printed (as far as the daemon retained it), then follows
it live with stdin forwarded; exits with its exit code when it ends. Ctrl-]
detaches (from a terminal), leaving the process running. For a process on
pipes, Ctrl-C ends attach too (exit 130) without signalling the process.

A session has one connection at a time: while another client holds it,
attach says which one and stops. --takeover takes the session from it (that
client then stops with a message).

${CLIENT_OPTIONS}
`,
  mcp: `Usage: execmux mcp [--cwd DIR]

A Model Context Protocol server on stdio with the tools exec_command and
write_stdin, running commands on the daemon. It waits for a daemon that is
not up yet, reconnects after an outage, and when the daemon lost its session
(a restart) starts a new one and says so in the next tool result.

Options:
  --cwd DIR        default directory for commands (a tool call's workdir is
                   resolved against it)

${CWD_RULE}

${CLIENT_OPTIONS}
`,
  token: `Usage: execmux token mint --secret-file FILE --sandbox NAME [--namespace NS] [options]
       execmux token mint --secret-file FILE --audience AUD [options]
       execmux token sandbox-key --secret-file FILE --namespace NS --sandbox NAME [--out FILE]
       execmux token environments --secret-file FILE --router URL [options] < claims.json

Credentials for a fleet of sandboxes whose daemons run with
--ws-auth signed-bearer-token (see docs/fleet.md). FILE is the fleet's secret
(at least 32 bytes, surrounding whitespace trimmed).

mint: prints a token (an HS256 JWT) for one sandbox. With --sandbox it is
signed with that sandbox's own key, derived from the fleet secret and the
sandbox's namespace (default: default) and name, and its audience is the
name; another sandbox refuses it. With --audience alone it is signed with the
secret itself (a daemon given that secret and --ws-audience AUD).
  --subject SUB    whom it is for (the JWT's sub)
  --issuer ISS     the JWT's iss (the daemon's --ws-issuer, if it sets one)
  --ttl DURATION   how long it is valid: 90s, 15m, 12h, 7d (default 1h)

sandbox-key: prints (or writes to --out, mode 0400) the key the sandbox
NAME in NS checks tokens with: what a pod's init container gives its daemon as
--ws-shared-secret-file, so the fleet secret never enters the sandbox.

environments: reads \`kubectl get sandboxclaims -o json\` on stdin and prints
Codex environments.toml entries, one per claim bound to a sandbox (its id is
the claim's name), each URL the router's path routing form with a fresh token:
URL/NAMESPACE/SANDBOX/PORT/?token=...
  --router URL     the router's ws:// or wss:// address with its
                   --path-routing-prefix (e.g. wss://sandboxes.example.com/sandboxes)
  --port PORT      the daemon's port in the pod (default 8888)
  --ttl DURATION   the tokens' lifetime (default 12h)
  --subject SUB, --issuer ISS   as for mint
  --default ID     the environment Codex uses by default
  --no-local       include_local = false: no local environment beside them
`,
} as const;

export type CommandName = keyof typeof COMMAND_USAGE;

export const USAGE = `Usage: execmux COMMAND [options]

Commands:
  serve                                   run the daemon
  exec [options] -- CMD ARGS...           run a command remotely, exit with its code
  ps [--session ID]                       list your sessions and their processes
  attach --session ID PROCESS             replay and follow a process (Ctrl-] detaches)
  mcp [--cwd DIR]                         MCP server on stdio: exec_command, write_stdin
  token mint|sandbox-key|environments    credentials for a fleet of sandboxes (docs/fleet.md)

execmux COMMAND --help     that command's options
execmux --version          the version
`;

/** True when `--help` or `-h` comes before any `--` (after it, they belong to the remote command). */
export function wantsHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).some((argument) => argument === "--help" || argument === "-h");
}
