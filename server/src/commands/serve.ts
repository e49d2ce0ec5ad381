/**
 * `execmux serve`: runs the daemon. It prints exactly one line, the ws://
 * URL, on stdout once it is listening; logs go to stderr. SIGTERM and SIGINT
 * stop it (every process tree terminated) with exit code 0. With `--listen
 * stdio`, stdout carries the protocol and nothing else, and the end of stdin
 * (or SIGHUP) ends it.
 *
 * With a process host (the default for a WebSocket listener) the process
 * started as `execmux serve` is the launcher (host/launcher.ts), and this
 * same command runs a second time, forked by the host, as the daemon.
 */
import { ConfigError, isStdioListen, loadConfig } from "../config.js";
import type { Listener } from "../daemon.js";
import { FRONT_ENV, type FrontReady } from "../host/host-protocol.js";
import { unknownVariableWarnings } from "../unknown-variables.js";
import { closeInheritedDescriptors } from "../spawner/inherited-fds.js";

export async function serveCommand(argv: string[]): Promise<void> {
  // Set only in a daemon its process host forked (host/front-process.ts); nothing it starts needs it.
  const hostSocket = process.env[FRONT_ENV];
  delete process.env[FRONT_ENV];
  // The host holds every session's PTY master without close-on-exec: none of them belongs in the process facing the network.
  if (hostSocket !== undefined) closeInheritedDescriptors();
  const warnings = unknownVariableWarnings(process.env);
  let config;
  try {
    config = loadConfig(argv, process.env);
  } catch (error) {
    // A misspelt variable is a likely cause of a bad configuration.
    if (error instanceof ConfigError) for (const warning of warnings) process.stderr.write(`execmux: warning: ${warning}\n`);
    throw error;
  }
  if (config.processHost === "separate" && hostSocket === undefined && !isStdioListen(config.listen)) {
    // This process finds or starts the process host, which forks the daemon proper; what that prints comes out here.
    // Loaded on use, as the daemon below: this process stays small.
    (await import("../listener-settings.js")).checkListenerSettings(config);
    return (await import("../host/launcher.js")).runLauncher(config, argv);
  }
  // Handlers go in before the URL is printed: a supervisor may signal the
  // moment it reads that line.
  let daemon: Pick<Listener, "log" | "close"> | undefined;
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
  // Its default would kill the daemon; it means "hand over" only once a process host is attached.
  let onHandOver: () => void = () => daemon?.log.warn("SIGUSR2 hands the sessions over only to a process host (--process-host separate, once started); ignored");
  process.on("SIGUSR2", () => onHandOver());

  if (isStdioListen(config.listen)) {
    const stdio = await (await import("../stdio-daemon.js")).startStdioDaemon(config);
    daemon = stdio;
    for (const warning of warnings) stdio.log.warn(warning);
    // A hung-up terminal, like the end of stdin, means the client is gone.
    onHangUp = () => shutdown("SIGHUP");
    void stdio.ended.then(() => shutdown("end of the stdio connection"));
    return;
  }
  const { startDaemon, startFrontDaemon } = await import("../daemon.js");
  const listening = hostSocket !== undefined ? await startFrontDaemon(config, hostSocket) : await startDaemon(config);
  daemon = listening;
  if ("handOver" in listening) {
    // SIGUSR2: leave every session to the next daemon (a restart, an upgrade) instead of ending them.
    onHandOver = () => {
      if (stopping) return;
      stopping = true;
      listening.log.info({ host: listening.host.hello.pid }, "handing the sessions over: the process host keeps them for the next daemon");
      // The host holds every client but a TLS one, whose socket drops as this process exits: it resumes with the next daemon.
      void listening.handOver().then(() => process.exit(0));
    };
    void listening.host.lost.then(() => {
      if (stopping) return;
      listening.log.fatal({ host: listening.host.hello.pid }, "the process host is gone, and every session with it; exiting");
      process.exit(1);
    });
  }
  // Token rotation without a restart.
  onHangUp = () => listening.reloadTokens();
  // Logged, not printed: stderr carries nothing but JSON log lines.
  for (const warning of warnings) listening.log.warn(warning);
  if (argv.some((argument) => argument === "--token" || argument.startsWith("--token="))) {
    listening.log.warn("--token on the command line can be read by every user of this machine (ps, /proc/PID/cmdline); use EXECMUX_TOKEN or --token-file");
  }
  // The host that forked this daemon holds the signals its launcher passed on until the daemon can act on them all.
  if (hostSocket !== undefined) process.send?.({ kind: "ready" } satisfies FrontReady);
  process.stdout.write(`${listening.url}\n`);
}
