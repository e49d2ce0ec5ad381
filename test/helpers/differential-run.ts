/**
 * Runs one differential case against one server: a fresh scratch directory
 * and fresh connections, each step in turn (a request is awaited before the
 * next step), and a normalized observation per step.
 */
import { ErrorCode } from "@execmux/shared";
import { CODEX_INITIALIZE, type DifferentialCase, type Observation, type Step } from "./differential-case.js";
import { DifferentialConnection, type Outcome } from "./differential-connection.js";
import { createScratchFiles, scratchTree } from "./differential-files.js";
import { normalize, type NormalizeContext } from "./differential-normalize.js";
import { contains, httpBody, isReplyTo, processEvents, takeFirst, withMergedChunks } from "./differential-streams.js";
import { scratchDirectory } from "./scratch.js";

export interface ServerUnderTest {
  readonly name: "upstream" | "execmux";
  readonly url: string;
}

export interface Run {
  readonly observations: Observation[];
  readonly log: string[];
}

const DEFAULT_TIMEOUT_MS = 3_000;
const SYNC_ID = "differential-sync";
/** Notifications that follow a process or a body on their own schedule: only steps that ask for them record them. */
const STREAMED = new Set(["process/output", "process/exited", "process/closed", "http/request/bodyDelta"]);

class CaseRun {
  readonly observations: Observation[] = [];
  readonly connections = new Map<string, DifferentialConnection>();
  /** Session ids from initialize replies, per connection, for `<session:NAME>` in frames. */
  readonly sessions = new Map<string, string>();
  /** Process ids whose process/start succeeded: waiting for the events of another would only time out. */
  readonly started = new Set<string>();
  /** Request ids answered with a result: the body of a failed http/request is not waited for either. */
  readonly succeeded = new Set<number | string>();
  private nextId = 1;

  constructor(
    readonly server: ServerUnderTest,
    readonly testCase: DifferentialCase,
    readonly context: NormalizeContext,
  ) {}

  get timeoutMs(): number {
    return this.testCase.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  connection(name = "a"): DifferentialConnection {
    const connection = this.connections.get(name);
    if (!connection) throw new Error(`case ${this.testCase.name}: no connection ${name} (add a connect step)`);
    return connection;
  }

  record(step: string, observed: unknown): void {
    this.observations.push({ step, observed: normalize(observed, this.context) });
  }

  /** `<scratch>`, `<http>`, `<http-port>` and `<session:NAME>` in a frame, made concrete for this server. */
  fill<T>(value: T): T {
    const text = JSON.stringify(value)
      .replaceAll("<scratch>", this.context.scratch)
      .replaceAll("<http>", this.context.httpOrigin ?? "<http>")
      .replaceAll("<http-port>", this.context.httpOrigin?.replace(/^.*:/, "") ?? "<http-port>")
      .replace(/<session:(\w+)>/g, (_match, name: string) => this.sessions.get(name) ?? `<no session on ${name}>`);
    return JSON.parse(text) as T;
  }

  allocateId(): number {
    return this.nextId++;
  }
}

export async function runCase(testCase: DifferentialCase, server: ServerUnderTest, httpOrigin: string | undefined): Promise<Run> {
  const scratch = scratchDirectory(`differential-${server.name}`);
  createScratchFiles(scratch, testCase.files ?? {});
  const context: NormalizeContext = {
    scratch,
    uuids: new Map(),
    collapseEnvironmentInfo: testCase.environmentInfo !== "compare",
    ...(httpOrigin ? { httpOrigin } : {}),
  };
  const run = new CaseRun(server, testCase, context);
  try {
    await runStep(run, { connect: "a" }, false);
    if (testCase.handshake !== false) await runStep(run, { handshake: true }, false);
    for (const step of testCase.steps) await runStep(run, step, true);
    for (const [name, connection] of run.connections) run.record(`${name}: at the end`, await finalState(connection, run.timeoutMs));
    if (testCase.snapshot) run.record("scratch tree", scratchTree(scratch));
  } finally {
    await Promise.all([...run.connections.values()].map((connection) => connection.close()));
  }
  const log = [...run.connections].flatMap(([name, connection]) => connection.log.map((line) => `${name} ${line}`));
  return { observations: run.observations, log };
}

async function runStep(run: CaseRun, step: Step, recorded: boolean): Promise<void> {
  const record = (label: string, observed: unknown): void => {
    if (recorded) run.record(label, observed);
  };
  if ("connect" in step) {
    run.connections.set(step.connect, await DifferentialConnection.open(run.server.url));
    return;
  }
  if ("disconnect" in step) {
    await run.connection(step.disconnect).close();
    return;
  }
  const on = step.on ?? "a";
  const connection = run.connection(on);
  if ("handshake" in step) {
    const params = { ...CODEX_INITIALIZE, resumeSessionId: step.resume ? run.fill(step.resume) : null };
    // A resume can reach the server before it noticed the old socket close: Codex's client retries -32010.
    const retryOn = step.resume ? ErrorCode.SessionAttached : undefined;
    const reply = await requestRetrying(run, on, { method: "initialize", params }, run.allocateId(), retryOn);
    const succeeded = "ok" in reply && typeof (reply.ok["result"] as { sessionId?: unknown } | undefined)?.sessionId === "string";
    if (succeeded) connection.send(JSON.stringify({ method: "initialized", params: {} }));
    else if (!recorded) throw new Error(`${run.server.name}: the handshake failed: ${JSON.stringify(reply)}`);
    record(`${on}: handshake${step.resume ? " (resume)" : ""}`, succeeded ? "ok" : observed(reply));
  } else if ("request" in step) {
    const frame = { method: step.request, ...("params" in step ? { params: step.params } : {}), ...step.extra };
    const id = step.id ?? run.allocateId();
    const reply = await requestRetrying(run, on, frame, id, step.retryWhileCode);
    const shown = step.mergeChunks && "ok" in reply ? { ok: withMergedChunks(reply.ok) } : reply;
    record(`${on}: ${step.request} #${String(id)}`, observed(shown));
  } else if ("send" in step) {
    connection.send(JSON.stringify(run.fill(step.send)));
  } else if ("sendText" in step) {
    connection.send(run.fill(step.sendText));
  } else if ("sendBinary" in step) {
    connection.send(run.fill(step.sendBinary), true);
  } else if ("reply" in step) {
    const reply = await connection.waitFor((frames) => takeFirst(frames, (message) => isReplyTo(message, step.reply)), run.timeoutMs);
    record(`${on}: reply ${String(step.reply)}`, observed(reply));
  } else if ("notification" in step) {
    const where = run.fill(step.where ?? {});
    if (typeof where["processId"] === "string" && !run.started.has(where["processId"])) return record(`${on}: notification ${step.notification}`, "<not started>");
    const found = await connection.waitFor(
      (frames) => takeFirst(frames, (message) => message["method"] === step.notification && contains(message["params"], where)),
      run.timeoutMs,
    );
    record(`${on}: notification ${step.notification}`, observed(found));
  } else if ("answer" in step) {
    const found = await connection.waitFor(
      (frames) => takeFirst(frames, (message) => message["method"] === step.answer && message["id"] !== undefined),
      run.timeoutMs,
    );
    if ("ok" in found && ("result" in step || "error" in step)) {
      const reply = "error" in step ? { id: found.ok["id"], error: step.error } : { id: found.ok["id"], result: step.result };
      connection.send(JSON.stringify(reply));
    }
    record(`${on}: request ${step.answer} from the server`, observed(found));
  } else if ("processEvents" in step) {
    const processId = run.fill(step.processEvents);
    const outcome = run.started.has(processId) ? observed(await processEvents(connection, processId, run.timeoutMs, run.server.name === "upstream")) : "<not started>";
    record(`${on}: events of ${step.processEvents}`, outcome);
  } else if ("httpBody" in step) {
    if (!run.succeeded.has(step.replyId)) return record(`${on}: body of ${step.httpBody}`, "<request failed>");
    record(`${on}: body of ${step.httpBody}`, observed(await httpBody(connection, step.httpBody, step.replyId, run.timeoutMs)));
  } else if ("expectClose" in step) {
    const id = run.allocateId();
    connection.send(JSON.stringify({ id: `${SYNC_ID}-${id}`, method: "differential/sync" }));
    const outcome = await connection.waitFor((frames) => takeFirst(frames, (message) => isReplyTo(message, `${SYNC_ID}-${id}`)), run.timeoutMs);
    record(`${on}: closed by the server?`, "closed" in outcome ? "closed" : "open");
  }
}

async function requestReply(run: CaseRun, on: string, frame: Record<string, unknown>, id: number | string): Promise<Outcome<Record<string, unknown>>> {
  const connection = run.connection(on);
  if (!connection.send(JSON.stringify(run.fill({ id, ...frame })))) return { closed: true };
  const reply = await connection.waitFor((frames) => takeFirst(frames, (message) => isReplyTo(message, id)), run.timeoutMs);
  const result = "ok" in reply ? (reply.ok["result"] as { sessionId?: unknown; processId?: unknown } | undefined) : undefined;
  if (result) run.succeeded.add(id);
  if (frame["method"] === "initialize" && typeof result?.sessionId === "string") run.sessions.set(on, result.sessionId);
  if (frame["method"] === "process/start" && result) run.started.add(String((run.fill(frame["params"]) as { processId?: unknown }).processId));
  return reply;
}

/** Sends again (same id) while the reply is the error `retryOn`, for at most the step's time limit. */
async function requestRetrying(
  run: CaseRun,
  on: string,
  frame: Record<string, unknown>,
  id: number | string,
  retryOn: number | undefined,
): Promise<Outcome<Record<string, unknown>>> {
  const deadline = Date.now() + run.timeoutMs;
  for (;;) {
    const reply = await requestReply(run, on, frame, id);
    const code = "ok" in reply ? (reply.ok["error"] as { code?: unknown } | undefined)?.code : undefined;
    if (retryOn === undefined || code !== retryOn || Date.now() > deadline) return reply;
  }
}

function observed(outcome: Outcome<unknown>): unknown {
  if ("ok" in outcome) return outcome.ok;
  return "timeout" in outcome ? "<nothing within the time limit>" : "<connection closed>";
}

/**
 * Whether the connection is still open after every step, and what arrived
 * that no step asked for (a reply nobody awaited, an unexpected notification).
 * A request answered by both servers whatever the state flushes what is due.
 */
async function finalState(connection: DifferentialConnection, timeoutMs: number): Promise<unknown> {
  if (!connection.isClosed) {
    connection.send(JSON.stringify({ id: SYNC_ID, method: "differential/sync" }));
    await connection.waitFor((frames) => takeFirst(frames, (message) => isReplyTo(message, SYNC_ID)), timeoutMs);
  }
  const unasked = connection.frames.filter((frame) => !frame.consumed && !STREAMED.has(String(frame.message["method"])));
  return { connection: connection.isClosed ? "closed" : "open", unasked: unasked.map((frame) => frame.message) };
}

