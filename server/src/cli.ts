#!/usr/bin/env node
/**
 * The `execmux` command: the daemon (`serve`) and its clients (`exec`, `ps`,
 * `attach`, `mcp`). Errors are one line on stderr (exit 2 for bad options,
 * 1 otherwise); the stack only with EXECMUX_DEBUG=1.
 */
import { ConfigError } from "./config.js";
import { CommandError, UsageError } from "./commands/command-error.js";
import { attachCommand } from "./commands/attach.js";
import { execCommand } from "./commands/exec.js";
import { mcpCommand } from "./commands/mcp.js";
import { psCommand } from "./commands/ps.js";
import { serveCommand } from "./commands/serve.js";
import { COMMAND_USAGE, USAGE, wantsHelp, type CommandName } from "./commands/usage.js";
import { VERSION } from "./version.js";

const COMMANDS: Record<CommandName, (argv: string[]) => Promise<void>> = {
  serve: serveCommand,
  exec: execCommand,
  ps: psCommand,
  attach: attachCommand,
  mcp: mcpCommand,
};

const isCommand = (name: string | undefined): name is CommandName => name !== undefined && Object.hasOwn(COMMANDS, name);

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (isCommand(command)) {
    if (wantsHelp(rest)) {
      process.stdout.write(COMMAND_USAGE[command]);
      return;
    }
    return COMMANDS[command](rest);
  }
  switch (command) {
    case "--version":
    case "-V":
    case "version":
      process.stdout.write(`execmux ${VERSION}\n`);
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
