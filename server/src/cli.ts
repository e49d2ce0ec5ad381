#!/usr/bin/env node
/**
 * The `execmux` command. `execmux serve` runs the daemon: it prints exactly
 * one line, the ws:// URL, on stdout once it is listening; logs go to stderr.
 * With `--listen stdio`, stdout carries the protocol and nothing else.
 */
import { ConfigError, describeOptions, isStdioListen, loadConfig } from "./config.js";
import { startDaemon, type Daemon } from "./daemon.js";
import { startStdioDaemon } from "./stdio-daemon.js";
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
--token (EXECMUX_TOKEN) and --session (EXECMUX_SESSION).

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
  let daemon: Pick<Daemon, "log" | "close"> | undefined;
  let onHangUp: () => void = () => undefined;
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
  process.on("SIGHUP", () => onHangUp());

  if (isStdioListen(config.listen)) {
    const stdio = await startStdioDaemon(config);
    daemon = stdio;
    // A hung-up terminal, like the end of stdin, means the client is gone.
    onHangUp = () => shutdown("SIGHUP");
    void stdio.ended.then(() => shutdown("end of the stdio connection"));
    return;
  }
  const listening = await startDaemon(config);
  daemon = listening;
  // Token rotation without a restart.
  onHangUp = () => listening.reloadTokens();
  process.stdout.write(`${listening.url}\n`);
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
