/**
 * Prometheus metrics. Labels are only ever small fixed sets (method names,
 * stream names, error codes, exit reasons): never a session id, process id,
 * command or path, so cardinality stays bounded whatever clients do.
 */
import type { OutputStream } from "@execmux/shared";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** prom-client defaults whose collection walks every descriptor, handle or resource of the daemon. */
const EXPENSIVE_DEFAULT_METRICS = [
  "process_open_fds",
  "nodejs_active_handles",
  "nodejs_active_handles_total",
  "nodejs_active_resources",
  "nodejs_active_resources_total",
];
import { HotCounter } from "./hot-counter.js";

/** What clients hold of the daemon-wide budgets (budgets/daemon-budgets.ts), read when scraped. */
export interface BudgetsInUse {
  readonly descriptors: number;
  readonly httpBodyBytes: number;
}

export class Metrics {
  readonly registry = new Registry();
  /** Set once the budgets exist (runtime.ts). */
  budgetsInUse: (() => BudgetsInUse) | undefined;

  readonly budgets = new Gauge({
    name: "execmux_budget_in_use",
    help: "What clients hold of the daemon-wide budgets, by budget: descriptors (connections, fs/open handles, http/request calls in flight), http_body_bytes (buffered http/request bodies until their reply is written).",
    labelNames: ["budget"] as const,
    registers: [this.registry],
    collect: () => {
      const inUse = this.budgetsInUse?.();
      if (!inUse) return;
      this.budgets.set({ budget: "descriptors" }, inUse.descriptors);
      this.budgets.set({ budget: "http_body_bytes" }, inUse.httpBodyBytes);
    },
  });

  readonly connections = new Gauge({ name: "execmux_connections", help: "Open WebSocket connections.", registers: [this.registry] });
  readonly sessions = new Gauge({
    name: "execmux_sessions",
    help: "Sessions by state.",
    labelNames: ["state"] as const,
    registers: [this.registry],
  });
  readonly sessionEvents = new Counter({
    name: "execmux_session_events_total",
    help: "Sessions created, resumed, taken over, observed and expired.",
    labelNames: ["event"] as const,
    registers: [this.registry],
  });
  readonly processesActive = new Gauge({
    name: "execmux_processes_active",
    help: "Processes not yet exited.",
    registers: [this.registry],
  });
  readonly processesStarted = new Counter({
    name: "execmux_processes_started_total",
    help: "Processes started.",
    labelNames: ["tty"] as const,
    registers: [this.registry],
  });
  readonly processesExited = new Counter({
    name: "execmux_processes_exited_total",
    help: "Processes exited, by reason: exit code 0, non-zero, or a signal.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  /** Per output chunk and per frame sent: summed outside prom-client until scraped (hot-counter.ts). */
  readonly outputBytes = new HotCounter<OutputStream>({
    name: "execmux_output_bytes_total",
    help: "Output bytes read from processes, by stream.",
    labelName: "stream",
    registry: this.registry,
  });
  readonly framesSent = new HotCounter<"reply" | "notification" | "binary_output">({
    name: "execmux_frames_sent_total",
    help: "WebSocket frames sent, by kind.",
    labelName: "kind",
    registry: this.registry,
  });
  readonly flowControlPauses = new Counter({
    name: "execmux_flow_control_pauses_total",
    help: "Times a process was paused because a client could not keep up.",
    registers: [this.registry],
  });
  readonly pollTrials = new Counter({
    name: "execmux_poll_after_input_trials_total",
    help: "Trials of polling after input (see the README's Polling after input), by what they decided: poll or sleep.",
    labelNames: ["decision"] as const,
    registers: [this.registry],
  });
  readonly readPauses = new Counter({
    name: "execmux_read_pauses_total",
    help: "Times the daemon stopped reading a connection, by reason: replies (the client is not taking them), rate (--max-requests-per-second), turn (it waits for its turn while other connections wait for theirs), handshake (frames sent right behind initialize wait for its reply), parsing (frames behind a large one wait while it is parsed off the event loop).",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: "execmux_request_duration_seconds",
    help: "Time to answer a request, by method (long-poll reads include their wait, and a process/write while the daemon polls after input its wait for the process's answer).",
    labelNames: ["method"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });
  readonly errors = new Counter({
    name: "execmux_errors_total",
    help: "JSON-RPC errors sent, by code.",
    labelNames: ["code"] as const,
    registers: [this.registry],
  });
  readonly spawnDuration = new Histogram({
    name: "execmux_spawn_duration_seconds",
    help: "Time to spawn a process, by kind.",
    labelNames: ["tty"] as const,
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5],
    registers: [this.registry],
  });

  constructor() {
    // Includes nodejs_eventloop_lag_* (event-loop delay), memory and CPU.
    // 1 ms precision: the default 10 ms would hide the stalls worth seeing.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 1 });
    // Gone: what costs a scrape in proportion to the daemon's processes. With
    // 4,096 processes (12k descriptors and handles) listing /proc/self/fd and
    // every libuv handle held the event loop for 176 ms per scrape on the
    // 2-core AMD VM; execmux_* gauges count processes and connections instead.
    for (const name of EXPENSIVE_DEFAULT_METRICS) this.registry.removeSingleMetric(name);
  }

  /** What GET /metrics answers: the text and its content type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
