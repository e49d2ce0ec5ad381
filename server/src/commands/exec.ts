/**
 * `execmux exec [--tty] [--cwd DIR] [-e K=V]... [--detach] [--sandbox MODE] -- CMD ARGS...`:
 * runs a command on the daemon as if it were local, and exits with its code.
 */
import { ErrorCode, RpcRequestError, SandboxModes, type ProcessHandle, type SandboxMode } from "@execmux/client";
import { CommandError, UsageError } from "./command-error.js";
import { clientNameOf, connectWith, parseClientArgs } from "./client-args.js";
import { isLoopbackUrl, remoteCwd } from "./remote-cwd.js";
import { SIGPIPE_EXIT_CODE, exitWith, followWindowSize, forwardInput, forwardSignals, printOutput, terminalSize } from "./terminal.js";

/** What a shell exits with when it cannot find the program, or cannot execute it. */
const NOT_FOUND_EXIT_CODE = 127;
const NOT_EXECUTABLE_EXIT_CODE = 126;

export async function execCommand(argv: string[]): Promise<void> {
  const args = parseClientArgs(argv, process.env, {
    "--tty": "switch",
    "-t": "switch",
    "--cwd": "value",
    "-e": "value",
    "--env": "value",
    "--detach": "switch",
    "-d": "switch",
    "--ttl": "value",
    "--sandbox": "value",
  });
  if (args.rest.length === 0) throw new UsageError("execmux exec needs a command: execmux exec [options] -- CMD ARGS...");
  const tty = args.flags.has("--tty") || args.flags.has("-t");
  const detach = args.flags.has("--detach") || args.flags.has("-d");
  const ttl = args.flags.get("--ttl")?.at(-1);
  if (ttl !== undefined && !detach) throw new UsageError("--ttl goes with --detach: how long the detached session may live");
  const env: Record<string, string> = {};
  for (const pair of [...(args.flags.get("-e") ?? []), ...(args.flags.get("--env") ?? [])]) {
    const equals = pair.indexOf("=");
    if (equals <= 0) throw new UsageError(`-e takes NAME=VALUE, got ${pair}`);
    env[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  if (tty && !env.TERM) env.TERM = process.env.TERM ?? "xterm-256color";
  const givenCwd = args.flags.get("--cwd")?.at(-1);
  const cwd = remoteCwd(args.url, givenCwd);
  const sandbox = sandboxMode(args.flags.get("--sandbox")?.at(-1));
  // The project is the remote cwd; "/" (a remote daemon's default) would make the whole disk writable.
  if (sandbox === "workspace-write" && cwd === "/") throw new UsageError("--sandbox workspace-write needs --cwd DIR: the project it may write");

  const client = await connectWith(args, {
    manualAcks: true,
    clientName: clientNameOf("exec"),
    // A new session only: one named with --session keeps the lifetime it has.
    ...(detach && !args.session ? detachedLifetime(ttl) : {}),
  });
  let handle: ProcessHandle;
  try {
    handle = await client.start({
      argv: args.rest,
      cwd,
      env,
      ...(sandbox ? { sandbox } : {}),
      tty,
      // Detached too: `execmux attach` may type into it later.
      pipeStdin: !tty,
      ...(tty ? terminalSize() : {}),
    });
  } catch (error) {
    client.close();
    throw explainStartFailure(error, args.rest[0]!, { cwd, defaulted: givenCwd === undefined, loopback: isLoopbackUrl(args.url) });
  }
  if (detach) {
    // The session outlives this connection: while the command runs (or for --ttl), then as long as detachedLifetime says.
    process.stdout.write(`session ${client.sessionId}\nprocess ${handle.processId}\n`);
    client.close();
    return;
  }
  printOutput(handle, () => {
    // As in a local pipeline: a writer whose reader went away gets SIGPIPE.
    void handle
      .signal("SIGPIPE")
      .catch(() => undefined)
      // Closing the client first would end wait() with an error.
      .finally(() => exitWith(SIGPIPE_EXIT_CODE));
  });
  forwardInput(handle, { raw: tty, connected: () => client.connected });
  if (tty) followWindowSize(handle);
  else forwardSignals(client, handle);
  const code = await handle.wait();
  client.close();
  exitWith(code);
}

/** How long a finished detached command's session stays, so `execmux ps` still shows its exit status. */
const KEEP_AFTER_EXIT_MS = 3_600_000;

/**
 * A detached command runs until it ends (keepWhileRunning), and its session
 * stays an hour after that; with --ttl DURATION it is a limit instead: the
 * session ends DURATION after this command returns (unless a client holds
 * it then), running or not, with SIGTERM, then SIGKILL. The daemon caps
 * both at its --max-session-ttl-ms.
 */
function detachedLifetime(ttl: string | undefined): { detachedTtlMs: number; keepWhileRunning: boolean } {
  if (ttl === undefined) return { detachedTtlMs: KEEP_AFTER_EXIT_MS, keepWhileRunning: true };
  return { detachedTtlMs: parseDuration(ttl), keepWhileRunning: false };
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90`, `90s`, `15m`, `2h`, `1d`, `500ms`: a number without a unit is seconds. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) throw new UsageError(`--ttl takes a duration such as 90s, 15m, 2h or 1d, got ${text}`);
  return Math.round(Number(match[1]) * DURATION_UNITS_MS[match[2] ?? "s"]!);
}

/** `--sandbox read-only|workspace-write`, Codex's modes; workspace-write may write the remote cwd (the project). */
function sandboxMode(mode: string | undefined): SandboxMode | undefined {
  if (mode === undefined) return undefined;
  if (!(SandboxModes as readonly string[]).includes(mode)) throw new UsageError(`--sandbox takes ${SandboxModes.join(" or ")}, got ${mode}`);
  return mode as SandboxMode;
}

/** A failed start in a shell's terms: 127 for a program that is not there, and a hint for a missing default directory. */
function explainStartFailure(error: unknown, program: string, where: { cwd: string; defaulted: boolean; loopback: boolean }): unknown {
  if (!(error instanceof RpcRequestError)) return error;
  // The daemon words a failed exec as upstream does: the OS error alone
  // (a missing working directory names itself after it).
  if (error.code === ErrorCode.InternalError && error.rpcMessage === "No such file or directory (os error 2)") {
    return new CommandError(`${program}: command not found on the daemon (${error.rpcMessage})`, NOT_FOUND_EXIT_CODE);
  }
  if (error.code === ErrorCode.InternalError && error.rpcMessage === "Permission denied (os error 13)") {
    return new CommandError(`${program}: not executable on the daemon (${error.rpcMessage})`, NOT_EXECUTABLE_EXIT_CODE);
  }
  if (error.code === ErrorCode.InternalError && where.defaulted && where.loopback && error.rpcMessage.endsWith(`working directory ${where.cwd}`)) {
    return new CommandError(
      `${error.rpcMessage}: the remote working directory defaults to this one for a daemon on this machine; pass --cwd DIR`,
      1,
    );
  }
  return error;
}
