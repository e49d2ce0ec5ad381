/**
 * What every daemon has whatever its transport: the spawner, the sessions,
 * metrics, and a shutdown that leaves no process behind. daemon.ts puts
 * HTTP and WebSockets in front of it; stdio-daemon.ts, stdin and stdout.
 */
import type { FastifyBaseLogger } from "fastify";
import { daemonFiles, type Config } from "./config.js";
import { Metrics } from "./metrics.js";
import { ANONYMOUS_IDENTITY } from "./auth/identity.js";
import { daemonBudgets } from "./budgets/daemon-budgets.js";
import { createProcessTrees } from "./process/process-trees.js";
import type { WebSocket } from "ws";
import { Connection, type ConnectionDeps, type PeerDescription } from "./rpc/connection.js";
import { WebSocketTransport } from "./transport/websocket-transport.js";
import { PollAfterInput } from "./rpc/poll-after-input.js";
import { TurnScheduler } from "./rpc/turn-scheduler.js";
import { OffThreadFrames } from "./rpc/off-thread-frames.js";
import { SessionRegistry } from "./session/session-registry.js";
import { Spawner } from "./spawner/spawner.js";
import { removeStaleFifoDirectories } from "./state/stale-leftovers.js";

export interface Runtime {
  readonly registry: SessionRegistry;
  readonly metrics: Metrics;
  readonly spawner: Spawner;
  /** What a Connection needs, with the logger it should use. */
  connectionDeps(log: FastifyBaseLogger): ConnectionDeps;
  /**
   * A client's WebSocket, authorized, now speaks JSON-RPC to the sessions
   * (and counts as a connection while open).
   */
  serveWebSocket(socket: WebSocket, peer: PeerDescription, log: FastifyBaseLogger): void;
  /** Terminates every process tree (SIGTERM, a grace period, SIGKILL) and stops the spawner. */
  close(): Promise<void>;
}

/** How often shutdown checks whether every process has exited after SIGTERM. */
const SHUTDOWN_POLL_MS = 10;
/** How long shutdown waits for killed trees to be gone before it removes their cgroups. */
const SHUTDOWN_REAP_MS = 2_000;

export function startRuntime(config: Config, log: FastifyBaseLogger): Runtime {
  const metrics = new Metrics();
  const processTrees = createProcessTrees(config.processContainment);
  log.info({ processContainment: processTrees.kind }, "process trees are held by this mechanism");
  // What daemons SIGKILLed with their spawners left in $TMPDIR, before this one adds its own.
  const leftovers = removeStaleFifoDirectories();
  if (leftovers.length > 0) log.info({ removed: leftovers }, "removed the FIFO directories of daemons that are gone");
  // Started first, while the daemon is small: every child is forked from it.
  let spawner: Spawner;
  try {
    spawner = new Spawner(
      (code, signal) => log.error({ code, signal }, "the spawner process exited; its children keep running and a new one is starting"),
      (details) => log.warn(details, "a start timed out waiting for the spawner process"),
      processTrees.cgroupRoot,
      config.spawnerPidNamespace,
    );
  } catch (error) {
    // Refused (--spawner-pid-namespace on where none can be made): the cgroup just made is empty, and goes.
    void processTrees.dispose(0);
    throw error;
  }
  if (config.spawnerPidNamespace !== "off") {
    log[spawner.inPidNamespace ? "info" : "warn"](
      { spawnerPidNamespace: spawner.inPidNamespace },
      spawner.inPidNamespace
        ? "the spawner runs in a PID namespace of its own: nothing it started survives even if every execmux process is killed at once"
        : "no PID namespace here (unshare --pid --mount-proc failed: no unshare, perl or mount, or no privilege): children outlive a daemon and spawner killed together",
    );
  }
  const pollAfterInput = new PollAfterInput(config.pollAfterInputMicros, undefined, (poll) =>
    metrics.pollTrials.inc({ decision: poll ? "poll" : "sleep" }),
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
    maxRetainedBytesTotal: config.maxRetainedBytesTotal,
    processTrees,
    metrics,
    log,
  });
  // What no sandbox may see: the files the configuration names for the daemon alone, and its spawner's FIFOs.
  const hiddenPaths = [...daemonFiles(config), spawner.fifoDirectory];
  const budgets = daemonBudgets(config);
  metrics.budgetsInUse = () => ({ descriptors: budgets.descriptors.charged, httpBodyBytes: budgets.httpBodies.reserved });
  const turns = new TurnScheduler();
  const frames = new OffThreadFrames();
  const connectionDeps = (connectionLog: FastifyBaseLogger): ConnectionDeps => ({ registry, config, log: connectionLog, metrics, spawner, pollAfterInput, hiddenPaths, budgets, turns, frames });
  return {
    registry,
    metrics,
    spawner,
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
      await terminateEverything(registry, config.killGraceMs);
      spawner.stop();
      await processTrees.dispose(SHUTDOWN_REAP_MS);
    },
  };
}

/** SIGTERM to every tree, a grace period to exit, then SIGKILL to what is left. */
async function terminateEverything(registry: SessionRegistry, graceMs: number): Promise<void> {
  const sessions = registry.all();
  for (const session of sessions) for (const process of session.list()) process.terminate();
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && !sessions.every((session) => session.allExited)) {
    await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_POLL_MS));
  }
  registry.killAll();
}
