/**
 * `execmux exec [--tty] [--cwd DIR] [-e K=V]... [--detach] [--sandbox MODE] -- CMD ARGS...`:
 * runs a command on the daemon as if it were local, and exits with its code.
 */
import { SandboxModes, type SandboxMode } from "@execmux/shared";
import { ConfigError } from "../config.js";
import { connectWith, parseClientArgs } from "./client-args.js";
import { SIGPIPE_EXIT_CODE, exitWith, followWindowSize, forwardInput, printOutput } from "./terminal.js";

export async function execCommand(argv: string[]): Promise<void> {
  const args = parseClientArgs(argv, process.env, { "--tty": "switch", "-t": "switch", "--cwd": "value", "-e": "value", "--env": "value", "--detach": "switch", "-d": "switch", "--sandbox": "value" });
  if (args.rest.length === 0) throw new ConfigError("execmux exec needs a command: execmux exec [options] -- CMD ARGS...");
  const tty = args.flags.has("--tty") || args.flags.has("-t");
  const detach = args.flags.has("--detach") || args.flags.has("-d");
  const env: Record<string, string> = {};
  for (const pair of [...(args.flags.get("-e") ?? []), ...(args.flags.get("--env") ?? [])]) {
    const equals = pair.indexOf("=");
    if (equals <= 0) throw new ConfigError(`-e takes NAME=VALUE, got ${pair}`);
    env[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  if (tty && !env.TERM) env.TERM = process.env.TERM ?? "xterm-256color";
  const cwd = args.flags.get("--cwd")?.at(-1);
  const sandbox = sandboxMode(args.flags.get("--sandbox")?.at(-1), cwd);

  const client = await connectWith(args, { manualAcks: true });
  const handle = await client.start({
    argv: args.rest,
    cwd: cwd ?? "/",
    env,
    ...(sandbox ? { sandbox } : {}),
    tty,
    // Detached too: `execmux attach` may type into it later.
    pipeStdin: !tty,
    ...(tty && process.stdout.isTTY ? { cols: process.stdout.columns, rows: process.stdout.rows } : {}),
  });
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
  forwardInput(handle, { raw: tty });
  if (tty) followWindowSize(handle);
  else {
    // Ctrl-C and friends go to the remote process rather than ending us first.
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      process.on(signal, () => void handle.signal(signal).catch(() => undefined));
    }
  }
  const code = await handle.wait();
  client.close();
  exitWith(code);
}

/** `--sandbox read-only|workspace-write`, Codex's modes; workspace-write writes the --cwd project. */
function sandboxMode(mode: string | undefined, cwd: string | undefined): SandboxMode | undefined {
  if (mode === undefined) return undefined;
  if (!(SandboxModes as readonly string[]).includes(mode)) {
    throw new ConfigError(`--sandbox takes ${SandboxModes.join(" or ")}, got ${mode}`);
  }
  // Without it the project would be "/", and the whole disk writable.
  if (mode === "workspace-write" && cwd === undefined) throw new ConfigError("--sandbox workspace-write needs --cwd DIR: the project it may write");
  return mode as SandboxMode;
}
