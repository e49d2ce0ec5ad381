/** Seq rules, exit and close, retention: upstream's local-process behaviour on the wire. */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { WireClient, b64, unb64 } from "./helpers/wire-client.js";
import { scratchDirectory } from "./helpers/scratch.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";
const start = (client: WireClient, processId: string, argv: string[], extra: Record<string, unknown> = {}) =>
  client.call("process/start", { processId, argv, cwd: "/tmp", env: { PATH }, tty: false, ...extra });

describe("process lifecycle", () => {
  it("runs the reference's example session: PTY echo, terminate, exited, closed", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const started = await client.call("process/start", {
      processId: "proc-1",
      argv: ["bash", "--noprofile", "--norc", "-c", "printf 'ready\\n'; while IFS= read -r line; do printf 'echo:%s\\n' \"$line\"; done"],
      cwd: "/tmp",
      env: { PATH: "/usr/bin:/bin" },
      tty: true,
      pipeStdin: false,
      arg0: null,
    });
    expect(started).toEqual({ processId: "proc-1", sandboxType: "none" });
    const ready = await client.next((message) => message.method === "process/output");
    expect(ready.params).toMatchObject({ processId: "proc-1", seq: 1, stream: "pty" });
    expect(unb64(ready.params?.chunk)).toBe("ready\r\n");

    expect(await client.call("process/write", { processId: "proc-1", chunk: b64("hello\n") })).toEqual({ status: "accepted" });
    await vi.waitUntil(() => client.output("proc-1").includes("echo:hello\r\n"));

    expect(await client.call("process/terminate", { processId: "proc-1" })).toEqual({ running: true });
    const exited = await client.next((message) => message.method === "process/exited");
    const closed = await client.closedOf("proc-1");
    expect(closed.params?.seq).toBe(Number(exited.params?.seq) + 1);
    expect(exited.params?.exitCode).toBe(128 + 15);
    const seqs = client.notifications("proc-1").map((message) => message.params?.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
  });

  it("numbers stdout, stderr, exit and close 1, 2, 3, 4 (exit code 7)", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    // Each step waits for a line on stdin, so the order is decided by the test, not by timing.
    await start(client, "p", ["sh", "-c", "printf out; read a; printf err >&2; read b; exit 7"], { pipeStdin: true });
    await client.next((message) => message.params?.stream === "stdout");
    await client.call("process/write", { processId: "p", chunk: b64("\n") });
    await client.next((message) => message.params?.stream === "stderr");
    await client.call("process/write", { processId: "p", chunk: b64("\n") });
    await client.closedOf("p");

    const events = client.notifications("p").map(({ method, params }) => ({ method, seq: params?.seq, stream: params?.stream, exitCode: params?.exitCode }));
    expect(events).toEqual([
      { method: "process/output", seq: 1, stream: "stdout", exitCode: undefined },
      { method: "process/output", seq: 2, stream: "stderr", exitCode: undefined },
      { method: "process/exited", seq: 3, stream: undefined, exitCode: 7 },
      { method: "process/closed", seq: 4, stream: undefined, exitCode: undefined },
    ]);
    expect(client.output("p", "stdout")).toBe("out");
    expect(client.output("p", "stderr")).toBe("err");
  });

  it("`true` exits 0 and closes", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "t", ["true"]);
    await client.closedOf("t");
    expect(client.notifications("t").map((message) => [message.method, message.params?.seq, message.params?.exitCode])).toEqual([
      ["process/exited", 1, 0],
      ["process/closed", 2, undefined],
    ]);
  });

  it("sends no notification of a process before the reply to its start, even when it exits at once", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    // The child's exit can reach the daemon before the start is answered.
    const ids = Array.from({ length: 100 }, (_, index) => `quick-${index}`);
    for (const processId of ids) {
      await start(client, processId, ["true"]);
      await client.closedOf(processId);
    }
    for (const processId of ids) {
      const replyAt = client.messages.findIndex((message) => message.result?.processId === processId);
      const firstNotificationAt = client.messages.findIndex((message) => message.method && message.params?.processId === processId);
      expect(replyAt, processId).toBeLessThan(firstNotificationAt);
    }
  });

  it("refuses a duplicate live processId, also when two starts race", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "dup", ["sleep", "30"]);
    const again = await client.request("process/start", { processId: "dup", argv: ["true"], cwd: "/", env: {} });
    expect(again.error).toMatchObject({ code: ErrorCode.InvalidRequest, message: "process dup already exists" });

    const racing = await Promise.all(
      [1, 2, 3].map(() => client.request("process/start", { processId: "race", argv: ["sleep", "30"], cwd: "/", env: { PATH } })),
    );
    expect(racing.filter((reply) => reply.result)).toHaveLength(1);
    expect(racing.filter((reply) => reply.error?.message === "process race already exists")).toHaveLength(2);
  });

  it("answers a write without stdin with stdinClosed, and the child reads EOF", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "c", ["sh", "-c", "cat; echo eof-seen"]);
    await client.closedOf("c");
    expect(client.output("c")).toBe("eof-seen\n");
    await start(client, "c2", ["sleep", "30"]);
    expect(await client.call("process/write", { processId: "c2", chunk: b64("x") })).toEqual({ status: "stdinClosed" });
    expect(await client.call("process/write", { processId: "nope", chunk: b64("x") })).toEqual({ status: "unknownProcess" });
  });

  it("answers terminate after exit with running: false", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "t", ["true"]);
    await client.closedOf("t");
    expect(await client.call("process/terminate", { processId: "t" })).toEqual({ running: false });
    expect(await client.call("process/terminate", { processId: "never" })).toEqual({ running: false });
  });

  it("keeps output that arrives after exit, and closes only after it", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    // A background subshell keeps stdout open after sh exits and prints once
    // the test writes to its FIFO.
    const fifo = join(scratchDirectory("fifo"), "go");
    execFileSync("mkfifo", [fifo]);
    await start(client, "late", ["sh", "-c", '(read x < "$0"; echo late) & exit 0', fifo]);
    const exited = await client.next((message) => message.method === "process/exited");
    expect(exited.params).toMatchObject({ seq: 1, exitCode: 0 });
    writeFileSync(fifo, "go\n");
    const closed = await client.closedOf("late");
    expect(closed.params?.seq).toBe(3);
    expect(client.output("late")).toBe("late\n");

    const read = await client.call("process/read", { processId: "late", afterSeq: 0 });
    expect(read).toEqual({
      chunks: [{ seq: 2, stream: "stdout", chunk: b64("late\n") }],
      nextSeq: 3,
      exited: true,
      exitCode: 0,
      closed: true,
      failure: null,
      sandboxDenied: false,
    });
  });

  it("replays retained events by read after close, paged by maxBytes", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "r", ["sh", "-c", "printf a; read x; printf bb; read y; printf ccc"], { pipeStdin: true });
    for (const expected of ["a", "bb"]) {
      await vi.waitUntil(() => client.output("r").endsWith(expected));
      await client.call("process/write", { processId: "r", chunk: b64("\n") });
    }
    await client.closedOf("r");

    const all = await client.call<{ chunks: { seq: number; chunk: string }[]; nextSeq: number }>("process/read", { processId: "r" });
    expect(all.chunks.map((chunk) => [chunk.seq, unb64(chunk.chunk)])).toEqual([[1, "a"], [2, "bb"], [3, "ccc"]]);
    expect(all.nextSeq).toBe(4);

    // The first chunk is always returned even when it alone is over maxBytes.
    const page = await client.call<{ chunks: { seq: number }[]; nextSeq: number }>("process/read", { processId: "r", afterSeq: 1, maxBytes: 1 });
    expect(page.chunks.map((chunk) => chunk.seq)).toEqual([2]);
    expect(page.nextSeq).toBe(3);

    const tail = await client.call("process/read", { processId: "r", afterSeq: 5 });
    expect(tail).toMatchObject({ chunks: [], nextSeq: 6, exited: true, exitCode: 0, closed: true });
  });

  it("evicts a closed process after the retention time and frees its id", async () => {
    const daemon = await startTestDaemon({ closedRetentionMs: 50 });
    const client = await WireClient.ready(daemon.url);
    await start(client, "gone", ["true"]);
    await client.closedOf("gone");
    await vi.waitFor(async () => {
      const reply = await client.request("process/read", { processId: "gone" });
      expect(reply.error).toMatchObject({ code: ErrorCode.InvalidRequest, message: "unknown process id gone" });
    });
    expect(await start(client, "gone", ["true"])).toEqual({ processId: "gone", sandboxType: "none" });
  });

  it("long-polls a read without delaying other requests on the same socket", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "cat", ["cat"], { pipeStdin: true });
    let readDone = false;
    const pending = client.request("process/read", { processId: "cat", afterSeq: 0, waitMs: 30_000 }).then((reply) => {
      readDone = true;
      return reply;
    });
    const list = await client.call<{ processes: { processId: string }[] }>("process/list", {});
    expect(list.processes.map((entry) => entry.processId)).toEqual(["cat"]);
    await start(client, "other", ["echo", "hi"]);
    await client.closedOf("other");
    expect(readDone).toBe(false);

    await client.call("process/write", { processId: "cat", chunk: b64("wake\n") });
    const read = await pending;
    expect(read.result?.chunks).toEqual([{ seq: 1, stream: "stdout", chunk: b64("wake\n") }]);
  });

  it("returns a long-poll read at once when the process exits after the cursor", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "x", ["sh", "-c", "read x; exit 3"], { pipeStdin: true });
    const pending = client.request("process/read", { processId: "x", afterSeq: 0, waitMs: 30_000 });
    await client.call("process/write", { processId: "x", chunk: b64("\n") });
    const read = await pending;
    expect(read.result).toMatchObject({ chunks: [], exited: true, exitCode: 3 });
  });

  it("reports evicted output explicitly instead of silently starting later", async () => {
    const total = 200_000;
    const daemon = await startTestDaemon({ retainedBytes: 4096 });
    const client = await WireClient.ready(daemon.url);
    await start(client, "big", ["head", "-c", String(total), "/dev/zero"]);
    await client.closedOf("big");

    type Read = { chunks: { seq: number; chunk: string }[]; gap?: { fromSeq: number; toSeq: number; chunks: number; bytes: number; bytesExact: boolean } };
    const read = await client.call<Read>("process/read", { processId: "big", afterSeq: 0 });
    const retained = read.chunks.reduce((sum, chunk) => sum + Buffer.from(chunk.chunk, "base64").length, 0);
    expect(read.gap).toBeDefined();
    expect(read.gap!.fromSeq).toBe(1);
    expect(read.gap!.toSeq).toBe(read.chunks[0]!.seq - 1);
    // The exit event may fall inside the range (output can outlast it); it is never evicted.
    const exitSeq = Number(client.notifications("big").find((message) => message.method === "process/exited")!.params!.seq);
    expect(read.gap!.chunks).toBe(read.gap!.toSeq - (exitSeq <= read.gap!.toSeq ? 1 : 0));
    expect(read.gap!.bytesExact).toBe(true);
    expect(read.gap!.bytes + retained).toBe(total);

    // A cursor inside the evicted range is told exactly what it missed after it.
    const live = client.notifications("big").filter((message) => message.method === "process/output");
    const cursor = Math.floor(read.gap!.toSeq / 2);
    const exitAfterCursor = exitSeq > cursor && exitSeq <= read.gap!.toSeq ? 1 : 0;
    const missedBytes = live
      .filter((message) => Number(message.params?.seq) > cursor && Number(message.params?.seq) <= read.gap!.toSeq)
      .reduce((sum, message) => sum + Buffer.from(String(message.params?.chunk), "base64").length, 0);
    const partial = await client.call<Read>("process/read", { processId: "big", afterSeq: cursor });
    expect(partial.gap).toEqual({ fromSeq: cursor + 1, toSeq: read.gap!.toSeq, chunks: read.gap!.toSeq - cursor - exitAfterCursor, bytes: missedBytes, bytesExact: true });

    // A reader that is caught up sees no gap.
    const caughtUp = await client.call<Read>("process/read", { processId: "big", afterSeq: read.gap!.toSeq });
    expect(caughtUp.gap).toBeUndefined();
  });

  it("reports unknown process ids on read with upstream's message", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const reply = await client.request("process/read", { processId: "ghost" });
    expect(reply.error).toEqual({ code: ErrorCode.InvalidRequest, message: "unknown process id ghost" });
  });
});
