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
  const args = parseClientArgs(argv, process.env, { "--tty": "switch", "-t": "switch", "--cwd": "value", "-e": "value", "--env": "value", "--detach": "switch", "-d": "switch", "--sandbox": "value" });
  if (args.rest.length === 0) throw new UsageError("execmux exec needs a command: execmux exec [options] -- CMD ARGS...");
  const tty = args.flags.has("--tty") || args.flags.has("-t");
  const detach = args.flags.has("--detach") || args.flags.has("-d");
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

  const client = await connectWith(args, { manualAcks: true, clientName: clientNameOf("exec") });
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
    // The session outlives this connection for the daemon's session TTL.
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
