/**
 * `execmux serve`: runs the daemon. It prints exactly one line, the ws://
 * URL, on stdout once it is listening; logs go to stderr. SIGTERM and SIGINT
 * stop it (every process tree terminated) with exit code 0. With `--listen
 * stdio`, stdout carries the protocol and nothing else, and the end of stdin
 * (or SIGHUP) ends it.
 *
 * Every process lives in the process host (host/process-host.ts), which
 * outlives this daemon on a fixed address: a crash or a SIGKILL loses no
 * process and no output, and SIGUSR2 hands everything over on purpose (an
 * upgrade); the same command started again takes it all back.
 */
import { ConfigError, isStdioListen, loadConfig } from "../config.js";
import type { Daemon } from "../daemon.js";
import { launchHost, launchOptions, persistentHost } from "../host/host-launch.js";
import { checkListenerSettings } from "../listener-settings.js";
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
  let daemon: Pick<Daemon, "log" | "close"> | undefined;
  let onHangUp: () => void = () => undefined;
  let onHandOver: () => void = () => undefined;
  let stopping = false;
  let stopWhenStarted: string | undefined;
  const shutdown = (signal: string) => {
    if (!daemon) {
      // Still starting: it stops once started, since the host it finds may hold sessions the stop must end. A second signal does not wait.
      if (stopWhenStarted) process.exit(0);
      stopWhenStarted = signal;
      return;
    }
    if (stopping) return;
    stopping = true;
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
  // Its default would kill the daemon; it means "hand over" once one is listening.
  process.on("SIGUSR2", () => onHandOver());
  process.stdout.on("error", () => undefined); // a reader gone does not stop the daemon

  // Refused settings end the start before a process host is started for them (a persistent one would stay).
  const listener = isStdioListen(config.listen) ? undefined : checkListenerSettings(config);
  // The process host starts now, while the rest of the daemon loads: a client's first process waits for both.
  const launched = launchHost(launchOptions(config)); // persistent only for a ws:// listen on a fixed port
  launched.catch(() => undefined); // the daemon reports it where it waits for the host

  if (isStdioListen(config.listen)) {
    const stdio = await (await import("../stdio-daemon.js")).startStdioDaemon(config, launched);
    daemon = stdio;
    if (stopWhenStarted) return shutdown(stopWhenStarted);
    for (const warning of warnings) stdio.log.warn(warning);
    // A hung-up terminal, like the end of stdin, means the client is gone.
    onHangUp = () => shutdown("SIGHUP");
    void stdio.ended.then(() => shutdown("end of the stdio connection"));
    return;
  }
  const { startDaemon } = await import("../daemon.js");
  const listening = await startDaemon(config, launched, listener);
  daemon = listening;
  if (stopWhenStarted) return shutdown(stopWhenStarted);
  const host = listening.runtime.host;
  onHandOver = () => {
    if (stopping) return;
    if (!persistentHost(config)) {
      listening.log.warn("SIGUSR2 hands the sessions over only to a process host that outlives the daemon (a fixed port, --process-host separate); ignored");
      return;
    }
    stopping = true;
    listening.log.info({ host: host.info.pid }, "handing the sessions over: the process host keeps them for the next daemon");
    void listening.leave().then(() => process.exit(0));
  };
  host.onceLost(() => {
    if (stopping) return;
    listening.log.fatal({ host: host.info.pid }, "the process host is gone, and every session with it; exiting");
    process.exit(1);
  });
  // Token rotation without a restart.
  onHangUp = () => listening.reloadTokens();
  // Logged, not printed: stderr carries nothing but JSON log lines.
  for (const warning of warnings) listening.log.warn(warning);
  if (argv.some((argument) => argument === "--token" || argument.startsWith("--token="))) {
    listening.log.warn("--token on the command line can be read by every user of this machine (ps, /proc/PID/cmdline); use EXECMUX_TOKEN or --token-file");
  }
  process.stdout.write(`${listening.url}\n`);
}
