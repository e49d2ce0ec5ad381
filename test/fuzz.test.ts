/**
 * Property-based fuzzing of a live daemon (a separate process, so a crash
 * would show): random JSON, mutated JSON-RPC messages, random and truncated
 * binary frames, huge numbers. The daemon must answer every request with a
 * well-formed reply, and a well-behaved client on another socket must keep
 * working throughout.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { connect } from "@execmux/client";
import { spawnDaemon } from "./helpers/cli.js";

const hugeNumbers = fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 2 ** 64, 1.5, -1, 0, 4.9e-324);
const weirdStrings = fc.oneof(fc.string(), fc.constantFrom("", "\u0000", "a\u0000b", "../../etc", "__proto__", "constructor", "💥".repeat(50)));
const anyValue = fc.oneof(fc.jsonValue(), hugeNumbers, weirdStrings);

const templates = [
  { method: "process/start", params: { processId: "f", argv: ["echo", "fuzz"], cwd: "/tmp", env: {}, tty: false } },
  { method: "process/start", params: { processId: "g", argv: ["echo", "tty"], cwd: "/tmp", env: {}, tty: true, cols: 80, rows: 24 } },
  { method: "process/read", params: { processId: "f", afterSeq: 0, maxBytes: 10, waitMs: 0 } },
  { method: "process/write", params: { processId: "f", chunk: "aGVsbG8=", writeId: "w" } },
  { method: "process/signal", params: { processId: "f", signal: "interrupt" } },
  { method: "process/terminate", params: { processId: "f" } },
  { method: "process/resize", params: { processId: "g", cols: 100, rows: 30 } },
  { method: "process/closeStdin", params: { processId: "f" } },
  { method: "process/list", params: {} },
  { method: "process/ack", params: { processId: "f", bytes: 10 } },
  { method: "initialize", params: { clientName: "again" } },
] as const;

/** A valid request with one field (or the whole params, or the method) replaced by a random value. */
const mutatedRequest = fc
  .tuple(fc.constantFrom(...templates), fc.option(fc.constantFrom("params", "method", "id", "field"), { nil: undefined }), anyValue, fc.string())
  .map(([template, where, value, key]) => {
    const message: Record<string, unknown> = { id: 1, method: template.method, params: { ...template.params } };
    if (where === "params") message.params = value;
    else if (where === "method") message.method = value;
    else if (where === "id") message.id = value;
    else if (where === "field") {
      const keys = Object.keys(template.params);
      (message.params as Record<string, unknown>)[keys.length > 0 && key.length % 2 === 0 ? keys[key.length % keys.length]! : key] = value;
    }
    return message;
  });

type Frame = { kind: "json"; message: unknown } | { kind: "text"; text: string } | { kind: "binary"; bytes: Uint8Array };
const frame: fc.Arbitrary<Frame> = fc.oneof(
  mutatedRequest.map((message) => ({ kind: "json" as const, message })),
  fc.jsonValue().map((message) => ({ kind: "json" as const, message })),
  fc.tuple(mutatedRequest, fc.nat()).map(([message, cut]) => {
    const text = JSON.stringify(message);
    return { kind: "text" as const, text: text.slice(0, cut % Math.max(1, text.length)) };
  }),
  fc.uint8Array({ maxLength: 256 }).map((bytes) => ({ kind: "binary" as const, bytes })),
);

/** Notifications a client may send; any other closes the connection, as upstream. */
const KNOWN_NOTIFICATIONS = new Set(["initialized", "process/ack"]);

/**
 * The id the daemon must answer; "close" when the frame ends the connection
 * (an unknown notification); undefined when no reply is due.
 */
function expectedReplyId(frame: Frame): number | string | "close" | undefined {
  let value: unknown;
  if (frame.kind === "binary") {
    try {
      value = JSON.parse(Buffer.from(frame.bytes).toString("utf8"));
    } catch {
      return -1;
    }
  } else if (frame.kind === "text") {
    try {
      value = JSON.parse(frame.text);
    } catch {
      return -1;
    }
  } else value = frame.message;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return -1;
  const message = value as Record<string, unknown>;
  const validId = (typeof message.id === "number" && Number.isFinite(message.id)) || typeof message.id === "string";
  if (message.method === undefined && ("result" in message || "error" in message)) return undefined;
  if (typeof message.method !== "string") return -1;
  if (message.id === undefined || message.id === null) return KNOWN_NOTIFICATIONS.has(message.method) ? undefined : "close";
  return validId ? (message.id as number | string) : -1;
}

async function fuzzSocket(url: string) {
  const socket = new WebSocket(url);
  await new Promise((resolve) => socket.once("open", resolve));
  const replies: { id: unknown; result?: unknown; error?: { code: unknown; message: unknown } }[] = [];
  const waiters: (() => void)[] = [];
  socket.on("message", (data, isBinary) => {
    if (isBinary) return;
    const message = JSON.parse(data.toString()) as { id?: unknown; method?: string };
    if (message.method === undefined) {
      replies.push(message as never);
      waiters.splice(0).forEach((wake) => wake());
    }
  });
  socket.send(JSON.stringify({ id: "init", method: "initialize", params: { clientName: "fuzz" } }));
  socket.send(JSON.stringify({ method: "initialized" }));
  const replyFor = async (id: unknown) => {
    for (;;) {
      const index = replies.findIndex((reply) => reply.id === id);
      if (index >= 0) return replies.splice(index, 1)[0]!;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  await replyFor("init");
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return { socket, replyFor, closed };
}

describe("fuzzing a live daemon", () => {
  it("answers every request with a well-formed reply, never crashes, and keeps serving others", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "silent", "--max-message-bytes", "65536"]);
    const good = await connect(daemon.url);
    const steady = await good.start({ argv: ["cat"], pipeStdin: true });
    let echoed = "";
    steady.onOutput((event) => (echoed += Buffer.from(event.data).toString()));
    let fuzz = await fuzzSocket(daemon.url);
    let round = 0;

    await fc.assert(
      fc.asyncProperty(frame, async (generated) => {
        // Give the frame an id the reply can be matched by, where it has one.
        if (generated.kind === "json" && typeof generated.message === "object" && generated.message && !Array.isArray(generated.message)) {
          const message = generated.message as Record<string, unknown>;
          if (typeof message.id === "number") message.id = 1_000_000 + round;
        }
        round++;
        const expected = expectedReplyId(generated);
        if (generated.kind === "binary") fuzz.socket.send(generated.bytes, { binary: true });
        else fuzz.socket.send(generated.kind === "text" ? generated.text : JSON.stringify(generated.message));
        if (expected === "close") {
          await fuzz.closed;
          fuzz = await fuzzSocket(daemon.url);
        } else if (expected !== undefined) {
          const reply = await fuzz.replyFor(expected);
          const wellFormed =
            (reply.result !== undefined && reply.error === undefined) ||
            (reply.error !== undefined && typeof reply.error.code === "number" && typeof reply.error.message === "string");
          expect(wellFormed).toBe(true);
        }
        // The well-behaved client is served all along.
        const marker = `tick-${round}\n`;
        await steady.write(marker);
        await new Promise<void>((resolve) => {
          const check = () => {
            if (!echoed.includes(marker)) return;
            off();
            resolve();
          };
          const off = steady.onOutput(check);
          check();
        });
      }),
      // A new seed every run; fast-check prints it with any counterexample.
      { numRuns: 400 },
    );

    expect(daemon.child.exitCode).toBeNull();
    const after = await good.start({ argv: ["echo", "still fine"] });
    expect(await after.wait()).toBe(0);
    good.close();
    fuzz.socket.close();
    daemon.child.kill("SIGTERM");
    expect((await daemon.exited).code).toBe(0);
  });
});
