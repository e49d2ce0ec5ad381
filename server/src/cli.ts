#!/usr/bin/env node
/**
 * The `execmux` command. `execmux serve` runs the daemon: it prints exactly
 * one line, the ws:// URL, on stdout once it is listening; logs go to stderr.
 */
import { ConfigError, describeOptions, loadConfig } from "./config.js";
import { startDaemon, type Daemon } from "./daemon.js";

const USAGE = `Usage: execmux serve [options]

Runs the execmux daemon. Every option is also an environment variable.

Options:
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
  process.stdout.write(`${daemon.url}\n`);
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case "serve":
      return serve(rest);
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
  const message = error instanceof ConfigError ? error.message : String((error as Error)?.stack ?? error);
  process.stderr.write(`execmux: ${message}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
