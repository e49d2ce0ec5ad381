#!/usr/bin/env node
/**
 * The `execmux` command. `execmux serve` runs the daemon: it prints exactly
 * one line, the ws:// URL, on stdout once it is listening; logs go to stderr.
 */
import { ConfigError, describeOptions, loadConfig } from "./config.js";
import { startDaemon, type Daemon } from "./daemon.js";
import { attachCommand } from "./commands/attach.js";
import { execCommand } from "./commands/exec.js";
import { mcpCommand } from "./commands/mcp.js";
import { psCommand } from "./commands/ps.js";

const USAGE = `Usage:
  execmux serve [options]                 run the daemon (options below)
  execmux exec [--tty] [--cwd DIR] [-e K=V]... [--detach] -- CMD ARGS...
                                          run a command remotely, exit with its code
  execmux ps --session ID                 list a session's processes
  execmux attach --session ID PROCESS     replay and follow a process (Ctrl-] detaches)
  execmux mcp [--cwd DIR]                 MCP server on stdio: exec_command, write_stdin

Client commands take --url (EXECMUX_URL, default ws://127.0.0.1:7373),
--session (EXECMUX_SESSION) and a token: EXECMUX_TOKEN, or --token-file FILE
(EXECMUX_TOKEN_FILE, its first line). --token works too, but a command line
is readable by every local user (ps, /proc); so is the daemon's.

Tokens for the daemon: EXECMUX_TOKEN or --token-file (one per line, rotated
without a restart); avoid --token on a shared machine for the same reason.

Daemon options (each also an environment variable):
${describeOptions()}
`;

async function serve(argv: string[]): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(USAGE);
    return;
  }
  const config = loadConfig(argv, process.env);
  // Handlers go in before the URL is printed: a supervisor may signal the
  // moment it reads that line.
  let daemon: Daemon | undefined;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (!daemon) process.exit(0); // nothing started yet
    daemon.log.info({ signal }, "shutting down");
    daemon.close().then(
      () => process.exit(0),
      (error: unknown) => {
        daemon?.log.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  // Token rotation without a restart.
  process.on("SIGHUP", () => daemon?.reloadTokens());

  daemon = await startDaemon(config);
  if (argv.some((argument) => argument === "--token" || argument.startsWith("--token="))) {
    daemon.log.warn("--token on the command line can be read by every user of this machine (ps, /proc/PID/cmdline); use EXECMUX_TOKEN or --token-file");
  }
  process.stdout.write(`${daemon.url}\n`);
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case "serve":
      return serve(rest);
    case "exec":
      return execCommand(rest);
    case "ps":
      return psCommand(rest);
    case "attach":
      return attachCommand(rest);
    case "mcp":
      return mcpCommand(rest);
    case undefined:
    case "help":
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
  // A clear sentence for the user; the stack only when asked for (EXECMUX_DEBUG=1).
  const message = error instanceof Error ? (process.env.EXECMUX_DEBUG ? (error.stack ?? error.message) : error.message) : String(error);
  process.stderr.write(`execmux: ${message}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
