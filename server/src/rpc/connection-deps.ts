/**
 * What every connection draws on from the daemon: its registry, its
 * configuration, its process host and the budgets and turns all
 * connections share. Apart from connection.ts so that method handlers can
 * name it without importing the connection itself.
 */
import type { Logger } from "../logger.js";
import type { SessionRegistry } from "../session/session-registry.js";
import type { DaemonBudgets } from "../budgets/daemon-budgets.js";
import type { Config } from "../config.js";
import type { Metrics } from "../metrics.js";
import type { ProcessHost } from "../host/process-host.js";
import type { OffThreadFrames } from "./off-thread-frames.js";
import type { PollAfterInput } from "./poll-after-input.js";
import type { TurnScheduler } from "./turn-scheduler.js";

export interface ConnectionDeps {
  readonly registry: SessionRegistry;
  readonly config: Config;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly host: ProcessHost;
  readonly pollAfterInput: PollAfterInput;
  /** The daemon's own files and directories (its secrets, sockets and state): hidden from every sandbox. */
  readonly hiddenPaths: readonly string[];
  /** What every client's requests draw on, per client and daemon-wide (descriptors, buffered bodies). */
  readonly budgets: DaemonBudgets;
  /** The event loop's turns, shared fairly by every connection (turn-scheduler.ts). */
  readonly turns: TurnScheduler;
  /** Where large frames are parsed, off the event loop. */
  readonly frames: OffThreadFrames;
}
