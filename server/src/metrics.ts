/**
 * Prometheus metrics: the daemon's own (metric-instruments.ts), and Node's
 * (prom-client's defaults: event-loop delay, heap, GC, CPU), which are loaded
 * and started on the first scrape: a daemon nobody monitors runs no monitor
 * and wakes for none.
 */
import type { OutputStream } from "@execmux/shared";
import type { Registry } from "prom-client";
import { Counter, Gauge, Histogram } from "./metric-instruments.js";

/** prom-client defaults whose collection walks every descriptor, handle or resource of the daemon. */
const EXPENSIVE_DEFAULT_METRICS = [
  "process_open_fds",
  "nodejs_active_handles",
  "nodejs_active_handles_total",
  "nodejs_active_resources",
  "nodejs_active_resources_total",
];

/** What clients hold of the daemon-wide budgets (budgets/daemon-budgets.ts), read when scraped. */
export interface BudgetsInUse {
  readonly descriptors: number;
  readonly httpBodyBytes: number;
}

export class Metrics {
  /** Set once the budgets exist (runtime.ts). */
  budgetsInUse: (() => BudgetsInUse) | undefined;
  readonly budgets = new Gauge<"descriptors" | "http_body_bytes">(
    "execmux_budget_in_use",
    "What clients hold of the daemon-wide budgets, by budget: descriptors (connections, fs/open handles, http/request calls in flight), http_body_bytes (buffered http/request bodies until their reply is written).",
    "budget",
  );
  readonly connections = new Gauge("execmux_connections", "Open WebSocket connections.");
  readonly sessions = new Gauge<"attached" | "detached">("execmux_sessions", "Sessions by state.", "state");
  readonly sessionEvents = new Counter<"created" | "resumed" | "taken_over" | "observed" | "expired">(
    "execmux_session_events_total",
    "Sessions created, resumed, taken over, observed and expired.",
    "event",
  );
  readonly processesActive = new Gauge("execmux_processes_active", "Processes not yet exited.");
  readonly processesStarted = new Counter<"true" | "false">("execmux_processes_started_total", "Processes started.", "tty");
  readonly processesExited = new Counter<"success" | "failure" | "signal">(
    "execmux_processes_exited_total",
    "Processes exited, by reason: exit code 0, non-zero, or a signal.",
    "reason",
  );
  readonly outputBytes = new Counter<OutputStream>("execmux_output_bytes_total", "Output bytes read from processes, by stream.", "stream");
  readonly framesSent = new Counter<"reply" | "notification" | "binary_output">("execmux_frames_sent_total", "WebSocket frames sent, by kind.", "kind");
  readonly flowControlPauses = new Counter("execmux_flow_control_pauses_total", "Times a process was paused because a client could not keep up.");
  readonly pollTrials = new Counter<"poll" | "sleep">(
    "execmux_poll_after_input_trials_total",
    "Trials of polling after input (see the README's Polling after input), by what they decided: poll or sleep.",
    "decision",
  );
  readonly readPauses = new Counter<string>(
    "execmux_read_pauses_total",
    "Times the daemon stopped reading a connection, by reason: replies (the client is not taking them), rate (--max-requests-per-second), turn (its share of an event-loop turn is used up), handshake (frames sent right behind initialize wait for its reply).",
    "reason",
  );
  readonly requestDuration = new Histogram<string>(
    "execmux_request_duration_seconds",
    "Time to answer a request, by method (long-poll reads include their wait, and a process/write while the daemon polls after input its wait for the process's answer).",
    "method",
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
  );
  readonly errors = new Counter<string>("execmux_errors_total", "JSON-RPC errors sent, by code.", "code");
  readonly spawnDuration = new Histogram<"true" | "false">(
    "execmux_spawn_duration_seconds",
    "Time to spawn a process, by kind (with the wait for one of the process host's start slots).",
    "tty",
    [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5],
  );

  /** Node's metrics, from the first scrape on. */
  private nodeMetrics: Promise<Registry> | undefined;

  private startNodeMetrics(): Promise<Registry> {
    return (this.nodeMetrics ??= import("prom-client").then((loaded) => {
      // prom-client is CommonJS: bundled (scripts/build-bundle.mjs), its exports are the module's default.
      const { Registry, collectDefaultMetrics } = "Registry" in loaded ? loaded : (loaded as { default: typeof loaded }).default;
      const registry = new Registry();
      // Includes nodejs_eventloop_lag_* (event-loop delay): 1 ms precision, the
      // default 10 ms would hide the stalls worth seeing; it runs only once
      // someone monitors the daemon.
      collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1 });
      // Gone: what costs a scrape in proportion to the daemon's processes. With
      // 4,096 processes (12k descriptors and handles) listing /proc/self/fd and
      // every libuv handle held the event loop for 176 ms per scrape on the
      // 2-core AMD VM; execmux_* gauges count processes and connections instead.
      for (const name of EXPENSIVE_DEFAULT_METRICS) registry.removeSingleMetric(name);
      return registry;
    }));
  }

  /** What GET /metrics answers: the text and its content type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    const registry = await this.startNodeMetrics();
    const inUse = this.budgetsInUse?.();
    if (inUse) {
      this.budgets.set("descriptors", inUse.descriptors);
      this.budgets.set("http_body_bytes", inUse.httpBodyBytes);
    }
    const own = [
      this.budgets,
      this.connections, this.sessions, this.sessionEvents, this.processesActive, this.processesStarted, this.processesExited,
      this.outputBytes, this.framesSent, this.flowControlPauses, this.pollTrials, this.readPauses, this.requestDuration,
      this.errors, this.spawnDuration,
    ].map((instrument) => instrument.text());
    return { contentType: registry.contentType, text: `${own.join("\n")}\n${await registry.metrics()}` };
  }
}
