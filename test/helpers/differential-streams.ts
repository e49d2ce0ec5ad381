/**
 * The frames of a differential connection that a step asks for: a reply, a
 * notification, a process's events up to process/closed, an http body up to
 * its done frame. What depends on timing (chunk boundaries) is folded away.
 */
import type { DifferentialConnection, Outcome, ReceivedFrame } from "./differential-connection.js";
import { describeSeqs, mergeChunks } from "./differential-normalize.js";

export function isReplyTo(message: Record<string, unknown>, id: number | string): boolean {
  return message["id"] === id && message["method"] === undefined;
}

export function takeFirst(frames: ReceivedFrame[], match: (message: Record<string, unknown>) => boolean): Record<string, unknown> | undefined {
  const frame = frames.find((candidate) => !candidate.consumed && match(candidate.message));
  if (!frame) return undefined;
  frame.consumed = true;
  return frame.message;
}

export function contains(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== "object") return actual === expected;
  if (actual === null || typeof actual !== "object") return false;
  return Object.entries(expected).every(([key, value]) => contains((actual as Record<string, unknown>)[key], value));
}

export function withMergedChunks(reply: Record<string, unknown>): Record<string, unknown> {
  const result = reply["result"] as { chunks?: { seq?: unknown; stream?: unknown; chunk?: unknown }[]; nextSeq?: unknown } | undefined;
  if (!result?.chunks) return reply;
  const { merged, seqs } = mergeChunks(result.chunks);
  return { ...reply, result: { ...result, chunks: merged, chunkSeqs: seqs, nextSeq: "<depends on chunking>" } };
}

/** How long a process's events wait for a seq missing below its closed's. */
const SEQ_GAP_GRACE_MS = 1_000;

/**
 * Every process/* notification of the process until process/closed, in seq
 * order, which is the order a client rebuilds (upstream's own notifications
 * can arrive out of it: seen 5,7,6 when the exit raced the output). Where
 * exited falls among the output is a race in upstream too (the exit and the
 * last read are seen by different tasks), so it is kept apart: the output,
 * merged per stream run; the other notifications; whether closed has the
 * last seq; whether the seqs are contiguous from 1.
 */
export async function processEvents(
  connection: DifferentialConnection,
  processId: string,
  timeoutMs: number,
  /** Upstream's only: execmux sends a process's events in seq order, and one that came late is a difference. */
  lateSeqsGrace = false,
): Promise<Outcome<unknown>> {
  const ofProcess = (message: Record<string, unknown>) =>
    String(message["method"]).startsWith("process/") && (message["params"] as { processId?: unknown } | undefined)?.processId === processId;
  const seqOf = (frame: { message: Record<string, unknown> }) => Number((frame.message["params"] as { seq?: unknown }).seq);
  const closed = await connection.waitFor(
    (frames) => frames.find((frame) => !frame.consumed && ofProcess(frame.message) && frame.message["method"] === "process/closed"),
    timeoutMs,
  );
  // A client rebuilds the order by seq, so it waits for what was numbered before closed and has not come yet
  // (once, under load, upstream's exited was missing when its closed came). Briefly: a notification really lost
  // still shows as a difference.
  if (lateSeqsGrace && "ok" in closed) {
    const closedSeq = seqOf(closed.ok);
    await connection.waitFor((frames) => {
      const seqs = new Set(frames.filter((frame) => !frame.consumed && ofProcess(frame.message)).map(seqOf));
      for (let seq = 1; seq < closedSeq; seq++) if (!seqs.has(seq)) return undefined;
      return true;
    }, SEQ_GAP_GRACE_MS);
  }
  const frames = connection.frames.filter((frame) => !frame.consumed && ofProcess(frame.message));
  for (const frame of frames) frame.consumed = true;
  const messages = frames
    .map((frame) => frame.message as { method: string; params: Record<string, unknown> })
    .sort((a, b) => Number(a.params["seq"]) - Number(b.params["seq"]) || 0);
  const withoutSeq = ({ method, params: { seq: _seq, ...params } }: (typeof messages)[number]) => ({ method, params });
  // Each run of one stream's output is its first notification, seq dropped, with the run's bytes.
  const output: { method: string; params: Record<string, unknown>; bytes: Buffer[] }[] = [];
  for (const message of messages.filter((candidate) => candidate.method === "process/output")) {
    const bytes = Buffer.from(String(message.params["chunk"]), "base64");
    const last = output.at(-1);
    if (last && last.params["stream"] === message.params["stream"]) last.bytes.push(bytes);
    else output.push({ ...withoutSeq(message), bytes: [bytes] });
  }
  return {
    ok: {
      output: output.map(({ method, params, bytes }) => ({ method, params: { ...params, chunk: Buffer.concat(bytes).toString("base64") } })),
      notifications: messages.filter((message) => message.method !== "process/output").map(withoutSeq),
      closedLast: messages.at(-1)?.method === "process/closed",
      seqs: `${describeSeqs(messages.map((message) => message.params.seq))}, first ${String(messages[0]?.params.seq)}`,
    },
  };
}

/**
 * A streamed http/request body: the deltas' bytes joined, their seqs, the
 * members of the non-terminal frames (each distinct shape once), the
 * terminal frame, and whether the reply came before the first delta.
 */
export async function httpBody(connection: DifferentialConnection, requestId: string, replyId: number | string, timeoutMs: number): Promise<Outcome<unknown>> {
  const ofRequest = (message: Record<string, unknown>) =>
    message["method"] === "http/request/bodyDelta" && (message["params"] as { requestId?: unknown } | undefined)?.requestId === requestId;
  const isDone = (message: Record<string, unknown>) => (message["params"] as { done?: unknown }).done === true;
  const done = await connection.waitFor((frames) => frames.find((frame) => !frame.consumed && ofRequest(frame.message) && isDone(frame.message)), timeoutMs);
  const frames = connection.frames.filter((frame) => !frame.consumed && ofRequest(frame.message));
  for (const frame of frames) frame.consumed = true;
  const deltas = frames.map((frame) => frame.message["params"] as Record<string, unknown>);
  const shapes = new Set(deltas.filter((delta) => delta["done"] !== true).map(({ deltaBase64: _bytes, seq: _seq, ...rest }) => JSON.stringify(rest)));
  const replyIndex = connection.frames.find((frame) => isReplyTo(frame.message, replyId))?.index ?? Infinity;
  return {
    ok: {
      body: Buffer.concat(deltas.map((delta) => Buffer.from(String(delta["deltaBase64"]), "base64"))).toString("utf8"),
      seqs: `${describeSeqs(deltas.map((delta) => delta["seq"]))}, first ${String(deltas[0]?.["seq"])}`,
      nonTerminal: [...shapes].map((shape) => JSON.parse(shape) as unknown),
      terminal: "ok" in done ? terminalFrame(deltas) : "<no done frame>",
      replyBeforeFirstDelta: replyIndex < (frames[0]?.index ?? Infinity),
    },
  };
}

/**
 * The done frame with its seq as the count of frames it ends: how many
 * deltas a body arrives in is where reads happened to split it (the target's
 * two writes came as one delta from execmux and two from upstream), and the
 * seqs being contiguous from 1 is checked beside it.
 */
function terminalFrame(deltas: Record<string, unknown>[]): unknown {
  const frame = deltas.find((delta) => delta["done"] === true);
  if (!frame) return undefined;
  const last = frame === deltas.at(-1) && frame["seq"] === deltas.length;
  return { ...frame, seq: last ? "<last, after every delta>" : frame["seq"] };
}
