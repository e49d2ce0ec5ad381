/**
 * What every daemon has whatever its transport: the process host (where
 * every process lives), the sessions, metrics, and a shutdown that leaves no
 * process behind. daemon.ts puts HTTP and WebSockets in front of it;
 * stdio-daemon.ts, stdin and stdout.
 */
import type { ProcessOrigin } from "@execmux/shared";
import type { Logger } from "./logger.js";
import type { WebSocket } from "ws";
import { daemonFiles, type Config } from "./config.js";
import { ProcessHost } from "./host/process-host.js";
import { launchOptions, persistentHost, type LaunchedHost } from "./host/host-launch.js";
import { stateDirectory, stateDirectoryWarnings } from "./host/state-directory.js";
import { Metrics } from "./metrics.js";
import { ManagedProcess } from "./process/managed-process.js";
import { ANONYMOUS_IDENTITY } from "./auth/identity.js";
import { daemonBudgets } from "./budgets/daemon-budgets.js";
import { shareOfMemory } from "./budgets/memory-limit.js";
import { Connection, type ConnectionDeps, type PeerDescription } from "./rpc/connection.js";
import { OffThreadFrames } from "./rpc/off-thread-frames.js";
import { PollAfterInput } from "./rpc/poll-after-input.js";
import { TurnScheduler } from "./rpc/turn-scheduler.js";
import { SessionRegistry } from "./session/session-registry.js";
import { WebSocketTransport } from "./transport/websocket-transport.js";

export interface Runtime {
  readonly registry: SessionRegistry;
  readonly metrics: Metrics;
  readonly host: ProcessHost;
  /** The event loop's turns, shared by every connection (and by connections coming and going). */
  readonly turns: TurnScheduler;
  /** What a Connection needs, with the logger it should use. */
  connectionDeps(log: Logger): ConnectionDeps;
  /**
   * A client's WebSocket, authorized, now speaks JSON-RPC to the sessions
   * (and counts as a connection while open).
   */
  serveWebSocket(socket: WebSocket, peer: PeerDescription, log: Logger): void;
  /** Terminates every process tree (SIGTERM, a grace period, SIGKILL); the host ends with it. */
  close(): Promise<void>;
  /** Lets go of the host, leaving it every session and process for the next daemon (an upgrade, a restart). */
  leave(): void;
}

const MiB = 1024 * 1024;

/** How a kept process was started, from what start.ts gave the host to keep (an unreadable record: nothing known). */
function originOf(meta: Buffer, startedAt: number): ProcessOrigin {
  try {
    const origin = JSON.parse(meta.toString("utf8")) as Partial<ProcessOrigin>;
    if (Array.isArray(origin.argv)) return { argv: origin.argv, argvTruncated: origin.argvTruncated === true, startedAt: origin.startedAt ?? startedAt };
  } catch {
    // Fall through: an empty argv.
  }
  return { argv: [], argvTruncated: true, startedAt };
}

/**
 * The runtime over the process host that `launched` found or started
 * (`execmux serve` starts it before it loads the daemon); one is found or
 * started now if not given.
 */
export async function openRuntime(config: Config, log: Logger, persistent = persistentHost(config), launched?: Promise<LaunchedHost>): Promise<Runtime> {
  const metrics = new Metrics();
  const options = {
    ...launchOptions(config, persistent),
    retainedBytes: config.retainedBytes,
    // Retained output lives in the host: its default follows the memory this daemon may use (a 512 MiB sandbox: 128 MiB).
    retentionBudget: shareOfMemory(config.maxRetainedBytesTotal, 1 / 4, 16 * MiB, 1024 * MiB),
    killGraceMs: config.killGraceMs,
    log: (level: "debug" | "info" | "warn" | "error", message: string) => log[level]({ component: "process host" }, message),
  };
  const host = await ProcessHost.open(options, launched);
  const { info } = host;
  log.info(
    { processContainment: info.containment, pidNamespace: info.pidNamespace, host: info.pid, found: !info.started && persistent },
    persistent && !info.started ? "found the running process host: its sessions are back" : "process host ready",
  );
  if (config.spawnerPidNamespace !== "off" && !info.pidNamespace) {
    log.warn("no PID namespace here (it needs root): processes outlive a process host killed outright");
  }
  const pollAfterInput = new PollAfterInput(config.pollAfterInputMicros, undefined, (poll) =>
    metrics.pollTrials.inc(poll ? "poll" : "sleep"),
  );
  const registry = new SessionRegistry({
    detachedSessionTtlMs: config.sessionTtlMs,
    maxSessionTtlMs: config.maxSessionTtlMs,
    maxLastingSessionsPerClient: config.maxLastingSessionsPerClient,
    maxObserversPerSession: config.maxObserversPerSession,
    killGraceMs: config.killGraceMs,
    closedRetentionMs: config.closedRetentionMs,
    maxSessions: config.maxSessions,
    maxSessionsPerClient: config.maxSessionsPerClient,
    maxDetachedSessions: config.maxDetachedSessions,
    maxProcessesPerSession: config.maxProcessesPerSession,
    maxProcesses: config.maxProcesses,
    maxClosedProcessesPerSession: config.maxClosedProcessesPerSession,
    host,
    metrics,
    log,
  });
  // What an earlier daemon left in a persistent host: every session, detached, to be resumed.
  const restored = host.takeRestored();
  // A shell snapshot's capture that an earlier daemon died in the middle of is no process of a client's: killed and forgotten.
  // (The literal is shell-snapshot/capture.ts's CAPTURE_META, written out so start-up loads nothing of that feature.)
  restored.processes = restored.processes.filter((kept) => kept.meta.toString("utf8") !== '{"shellSnapshotCapture":true}' || (host.forget(kept.handle), false));
  registry.restore(restored, (session, kept) => {
    const process = new ManagedProcess(kept.processId, kept.tty, { host, maxStdinBufferBytes: config.maxStdinBufferBytes, sandboxed: kept.sandboxed }, session.onProcessEvent);
    process.restore(kept.state);
    process.attach(kept.handle, kept.state.pid, kept.state.startEpochMs);
    session.commit(process, originOf(kept.meta, kept.state.startEpochMs));
    // What it did before this daemon: counted and kept as if heard now (no client is attached to hear it).
    if (kept.state.exited) session.onProcessEvent(process, { kind: "exited", seq: kept.state.exitSeq, exitCode: kept.state.exitCode });
    if (kept.state.closed) session.onProcessEvent(process, { kind: "closed", seq: kept.state.closedSeq });
  });
  if (restored.sessions.length > 0) log.info({ sessions: restored.sessions.length, processes: restored.processes.length }, "sessions kept by the process host");
  // Chosen now, so what no sandbox may see names it (a default passed over leaves a fallback of unpredictable name).
  stateDirectory(config.stateDirectory);
  for (const warning of stateDirectoryWarnings(config.stateDirectory)) log.warn(warning);
  // What no sandbox may see: the files the configuration names for the daemon alone.
  const hiddenPaths = daemonFiles(config);
  const budgets = daemonBudgets(config);
  metrics.budgetsInUse = () => ({ descriptors: budgets.descriptors.charged, httpBodyBytes: budgets.httpBodies.reserved });
  const turns = new TurnScheduler();
  const frames = new OffThreadFrames();
  const connectionDeps = (connectionLog: Logger): ConnectionDeps => ({ registry, config, log: connectionLog, metrics, host, pollAfterInput, hiddenPaths, budgets, turns, frames });
  return {
    registry,
    metrics,
    host,
    turns,
    connectionDeps,
    serveWebSocket: (socket, peer, connectionLog) => {
      // The client's socket is a descriptor of this process: charged to its client, refused past a cap with 1013 (try again later).
      let release: () => void;
      try {
        release = budgets.descriptors.take(peer.client ?? ANONYMOUS_IDENTITY, "connection");
      } catch (error) {
        connectionLog.warn({ err: error }, "connection refused: descriptor budget");
        socket.close(1013, (error as Error).message.slice(0, 120));
        return;
      }
      socket.once("close", release);
      metrics.connections.inc();
      socket.once("close", () => metrics.connections.dec());
      new Connection(new WebSocketTransport(socket), connectionDeps(connectionLog), peer);
    },
    close: async () => {
      registry.stopExpiry();
      await host.shutdown(config.killGraceMs);
    },
    leave: () => {
      registry.stopExpiry();
      host.leave();
    },
  };
}
