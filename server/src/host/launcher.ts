/**
 * `execmux serve` with a process host: this process finds the host of its
 * listen address (or starts one) and asks it to start the daemon that
 * listens on the port (the front), with this command line, directory and
 * environment. The host forks the front, so the front can hand it each
 * client's socket over their IPC channel (front-handoff.ts): the host then
 * reads and writes the client's socket itself, with no relay in between.
 *
 * To a supervisor and a terminal this process is the daemon: the front's
 * stdout (the URL line) and log lines come out here, signals sent here go to
 * the front, and it exits as the front does. When it is killed, the host
 * kills the front; the sessions, and the clients the front handed over,
 * stay with the host for the next `execmux serve`.
 */
import { constants } from "node:os";
import type { Config } from "../config.js";
import { createLogger } from "../logger.js";
import { connectHost, greetHost } from "./host-client.js";
import { PASSED_ON_SIGNALS, settingsNotApplied, type FrontCommand, type FrontExit } from "./host-protocol.js";
import { encodeFrame, FrameKind } from "./link-frames.js";

export async function runLauncher(config: Config, argv: readonly string[]): Promise<void> {
  const log = createLogger(config);
  // Before anything else: a supervisor may signal as soon as it started this process.
  const pending: string[] = [];
  let send: (signal: string) => void = (signal) => void pending.push(signal);
  const stopSignals = new Set<string>();
  for (const signal of PASSED_ON_SIGNALS) {
    process.on(signal, () => {
      if (signal !== "SIGHUP") stopSignals.add(signal);
      send(signal);
    });
  }
  process.stdout.on("error", () => undefined); // a reader gone does not stop the daemon

  const { socket, path, started } = await connectHost(config);
  const front: FrontCommand = {
    execPath: process.execPath,
    execArgv: process.execArgv,
    script: process.argv[1]!,
    argv,
    cwd: process.cwd(),
    env: Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
  };
  // Set by the link's last frame (a holder: the compiler cannot see a callback assign a variable).
  const outcome: { ended?: FrontExit } = {};
  const host = await greetHost(
    socket,
    path,
    "launcher",
    {
      log: (line) => process.stderr.write(line),
      stdout: (bytes) => process.stdout.write(bytes),
      exit: (how) => (outcome.ended = how),
    },
  );
  socket.write(encodeFrame(FrameKind.Start, JSON.stringify(front)));
  send = (signal) => socket.write(encodeFrame(FrameKind.Signal, signal));
  for (const signal of pending.splice(0)) send(signal);
  log.info({ host: host.pid, hostVersion: host.execmuxVersion, socket: path, found: !started }, started ? "started a process host" : "found the running process host");
  const differing = settingsNotApplied(config, host.config);
  if (differing.length > 0) {
    log.warn(
      { settings: differing, host: host.pid },
      "the process host keeps the settings and environment it started with; these of this daemon's apply only once that host has ended (SIGTERM to this daemon ends it and its processes)",
    );
  }

  await new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const { ended } = outcome;
  if (!ended) {
    log.fatal({ host: host.pid }, "the process host is gone, and every session with it; exiting");
    process.exitCode = 1;
  } else if (ended.signal) {
    // Stopped by the very signal this process passed on: the stop that was asked for.
    const asked = stopSignals.has(ended.signal);
    if (!asked) log.fatal({ signal: ended.signal }, `the daemon was killed (${ended.signal})`);
    process.exitCode = asked ? 0 : 128 + (constants.signals[ended.signal] ?? 0);
  } else {
    process.exitCode = ended.code ?? 1;
  }
}
