#!/usr/bin/env node
/**
 * The `execmux` command: the daemon (`serve`) and its clients (`exec`, `ps`,
 * `attach`, `mcp`). Errors are one line on stderr (exit 2 for bad options,
 * 1 otherwise); the stack only with EXECMUX_DEBUG=1.
 */
import { ConfigError } from "./config.js";
import { CommandError, UsageError } from "./commands/command-error.js";
import { COMMAND_USAGE, USAGE, wantsHelp, type CommandName } from "./commands/usage.js";
import { EXECMUX_VERSION } from "./version.js";

type Command = (argv: string[]) => Promise<void>;

/** Loaded on use: a client command never loads the daemon (its HTTP server, its process host), and --help and --version load neither. */
const COMMANDS: Record<CommandName, () => Promise<Command>> = {
  serve: async () => (await import("./commands/serve.js")).serveCommand,
  exec: async () => (await import("./commands/exec.js")).execCommand,
  ps: async () => (await import("./commands/ps.js")).psCommand,
  attach: async () => (await import("./commands/attach.js")).attachCommand,
  mcp: async () => (await import("./commands/mcp.js")).mcpCommand,
  token: async () => (await import("./commands/token.js")).tokenCommand,
};

const isCommand = (name: string | undefined): name is CommandName => name !== undefined && Object.hasOwn(COMMANDS, name);

/**
 * A command whose reader went away (`execmux ps | head`) ends as a member of a pipeline does, with
 * 141 (128 + SIGPIPE) and no EPIPE stack trace. The commands that own their stdout handle it themselves:
 * `serve` keeps running when whoever read its URL line is gone, `exec` and `attach` also stop the remote
 * writer (commands/terminal.ts), `mcp` speaks its protocol there.
 */
const OWN_STDOUT: readonly string[] = ["serve", "exec", "attach", "mcp"];
function endWhenStdoutCloses(): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(141);
  });
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (!OWN_STDOUT.includes(command ?? "")) endWhenStdoutCloses();
  if (isCommand(command)) {
    if (wantsHelp(rest)) {
      process.stdout.write(COMMAND_USAGE[command]);
      return;
    }
    return (await COMMANDS[command]())(rest);
  }
  switch (command) {
    case "--version":
    case "-V":
    case "version":
      process.stdout.write(`execmux ${EXECMUX_VERSION}\n`);
      return;
    case "help":
      process.stdout.write(isCommand(rest[0]) ? COMMAND_USAGE[rest[0]] : USAGE);
      return;
    case undefined:
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(`execmux: unknown command ${command}\n\n${USAGE}`);
      process.exitCode = 2;
  }
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (process.env.EXECMUX_DEBUG ? (error.stack ?? error.message) : error.message) : String(error);
  process.stderr.write(`execmux: ${message}\n`);
  process.exit(error instanceof ConfigError ? 2 : error instanceof UsageError || error instanceof CommandError ? error.exitCode : 1);
});
