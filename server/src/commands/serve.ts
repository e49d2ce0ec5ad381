/**
 * `execmux serve`: runs the daemon. It prints exactly one line, the ws://
 * URL, on stdout once it is listening; logs go to stderr. SIGTERM and SIGINT
 * stop it (every process tree terminated) with exit code 0.
 */
import { ConfigError, loadConfig } from "../config.js";
import { startDaemon, type Daemon } from "../daemon.js";
import { unknownVariableWarnings } from "../unknown-variables.js";

export async function serveCommand(argv: string[]): Promise<void> {
  const warnings = unknownVariableWarnings(process.env);
  let config;
  try {
    config = loadConfig(argv, process.env);
  } catch (error) {
    // A misspelt variable is a likely cause of a bad configuration.
    if (error instanceof ConfigError) for (const warning of warnings) process.stderr.write(`execmux: warning: ${warning}\n`);
    throw error;
  }
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
  // Logged, not printed: stderr carries nothing but JSON log lines.
  for (const warning of warnings) daemon.log.warn(warning);
  process.stdout.write(`${daemon.url}\n`);
}
