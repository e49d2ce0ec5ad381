/** Processes belong to the session, not the socket: detach, resume, expiry. */
import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { hostPidOf, isRunning } from "./helpers/procfs.js";
import WebSocket from "ws";
import { WireClient, b64, unb64 } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

describe("session resume (upstream style)", () => {
  it("keeps processes running while detached and catches up with process/read afterSeq", async () => {
    const daemon = await startTestDaemon();
    const first = await WireClient.connect(daemon.url);
    const { sessionId } = await first.call<{ sessionId: string }>("initialize", { clientName: "a" });
    first.send({ method: "initialized" });
    await first.call("process/start", { processId: "cat", argv: ["cat"], cwd: "/", env: { PATH }, pipeStdin: true, tty: false });
    await first.call("process/write", { processId: "cat", chunk: b64("before\n") });
    await first.next((message) => message.method === "process/output");
    first.close();
    await first.closed;

    const second = await WireClient.connect(daemon.url);
    const resumed = await second.call<{ sessionId: string }>("initialize", { clientName: "b", resumeSessionId: sessionId });
    expect(resumed.sessionId).toBe(sessionId);
    second.send({ method: "initialized" });
    await second.call("process/write", { processId: "cat", chunk: b64("after\n") });
    const read = await second.call<{ chunks: { seq: number; chunk: string }[] }>("process/read", { processId: "cat", afterSeq: 1, waitMs: 10_000 });
    expect(read.chunks.map((chunk) => [chunk.seq, unb64(chunk.chunk)])).toEqual([[2, "after\n"]]);
    // Live notifications now go to the new socket.
    await second.call("process/write", { processId: "cat", chunk: b64("live\n") });
    const live = await second.next((message) => message.method === "process/output" && message.params?.seq === 3);
    expect(unb64(live.params?.chunk)).toBe("live\n");
  });

  it("refuses an unknown session id with -32600 and an attached one with -32010", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.connect(daemon.url);
    const unknown = await client.request("initialize", { clientName: "x", resumeSessionId: "00000000-0000-0000-0000-000000000000" });
    expect(unknown.error).toEqual({ code: ErrorCode.InvalidRequest, message: "unknown session id 00000000-0000-0000-0000-000000000000" });

    const holder = await WireClient.ready(daemon.url);
    const sessionId = String((holder.messages.find((message) => message.result?.sessionId)!.result!).sessionId);
    const thief = await client.request("initialize", { clientName: "x", resumeSessionId: sessionId });
    expect(thief.error?.code).toBe(ErrorCode.SessionAttached);
    // The refused resume did not use up this socket's initialize.
    const fresh = await client.request("initialize", { clientName: "x" });
    expect(fresh.result?.sessionId).toBeTypeOf("string");
  });

  it("kills every process of a session nobody resumed within the TTL", async () => {
    const daemon = await startTestDaemon({ sessionTtlMs: 100 });
    const client = await WireClient.connect(daemon.url);
    const { sessionId } = await client.call<{ sessionId: string }>("initialize", { clientName: "a" });
    client.send({ method: "initialized" });
    await client.call("process/start", { processId: "s", argv: ["sh", "-c", "sleep 300 & echo $!; wait"], cwd: "/", env: { PATH }, tty: false });
    await vi.waitUntil(() => client.output("s").includes("\n"));
    const list = await client.call<{ processes: { pid: number }[] }>("process/list", {});
    const pids = [list.processes[0]!.pid, hostPidOf(Number(client.output("s").trim()), daemon)];
    client.close();
    await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]));

    const late = await WireClient.connect(daemon.url);
    const reply = await late.request("initialize", { clientName: "b", resumeSessionId: sessionId });
    expect(reply.error).toEqual({ code: ErrorCode.InvalidRequest, message: `unknown session id ${sessionId}` });
  });
});

describe("session resume (extensions)", () => {
  it("replays everything after each cursor, in seq order, before live events, and names forgotten processes", async () => {
    const daemon = await startTestDaemon({ retainedBytes: 1024 });
    const first = await WireClient.connect(daemon.url);
    const { sessionId } = await first.call<{ sessionId: string }>("initialize", { clientName: "a" });
    first.send({ method: "initialized" });
    await first.call("process/start", { processId: "talk", argv: ["sh", "-c", "echo one; read x; echo two; exit 9"], cwd: "/", env: { PATH }, pipeStdin: true, tty: false });
    await first.next((message) => message.method === "process/output");
    first.close();
    await first.closed;

    // While detached: more output, then exit and close.
    const session = daemon.registry.all()[0]!;
    session.find("talk")!.write(Buffer.from("\n"), null);
    await vi.waitUntil(() => session.find("talk")!.closed);

    const second = await WireClient.connect(daemon.url);
    const reply = await second.request("initialize", { clientName: "b", resumeSessionId: sessionId, cursors: { talk: 1, gone: 3 } });
    expect(reply.result).toMatchObject({ sessionId, unknownProcessIds: ["gone"] });
    await second.closedOf("talk");
    const replayed = second.notifications("talk").map((message) => [message.method, message.params?.seq]);
    expect(replayed).toEqual([
      ["process/output", 2],
      ["process/exited", 3],
      ["process/closed", 4],
    ]);
    expect(second.output("talk")).toBe("two\n");
    // The reply came before the replay.
    expect(second.messages.indexOf(reply)).toBeLessThan(second.messages.findIndex((message) => message.method === "process/output"));
  });

  it("sends process/gap before the replay when the cursor is older than what is retained", async () => {
    const daemon = await startTestDaemon({ retainedBytes: 4096 });
    const first = await WireClient.connect(daemon.url);
    const { sessionId } = await first.call<{ sessionId: string }>("initialize", { clientName: "a" });
    first.send({ method: "initialized" });
    await first.call("process/start", { processId: "big", argv: ["head", "-c", "100000", "/dev/zero"], cwd: "/", env: { PATH }, tty: false });
    await first.closedOf("big");
    first.close();
    await first.closed;

    const second = await WireClient.connect(daemon.url);
    await second.call("initialize", { clientName: "b", resumeSessionId: sessionId, cursors: { big: 0 } });
    await second.closedOf("big");
    const [gap, ...rest] = second.notifications("big");
    expect(gap!.method).toBe("process/gap");
    const replayedBytes = rest
      .filter((message) => message.method === "process/output")
      .reduce((sum, message) => sum + Buffer.from(String(message.params?.chunk), "base64").length, 0);
    expect(gap!.params).toMatchObject({ processId: "big", fromSeq: 1, bytesExact: true });
    expect(Number(gap!.params?.bytes) + replayedBytes).toBe(100_000);
    // Replay resumes right after the gap (the exit event may sit inside its range).
    expect(rest.find((message) => message.method === "process/output")!.params?.seq).toBe(Number(gap!.params?.toSeq) + 1);
  });

  it("lets the rightful client take a session over from a stale connection, failing its long-poll", async () => {
    const daemon = await startTestDaemon();
    const stale = await WireClient.connect(daemon.url);
    const { sessionId } = await stale.call<{ sessionId: string }>("initialize", { clientName: "stale" });
    stale.send({ method: "initialized" });
    await stale.call("process/start", { processId: "cat", argv: ["cat"], cwd: "/", env: { PATH }, pipeStdin: true, tty: false });
    const pendingRead = stale.request("process/read", { processId: "cat", waitMs: 30_000 });

    const rightful = await WireClient.connect(daemon.url);
    const refused = await rightful.request("initialize", { clientName: "new", resumeSessionId: sessionId });
    expect(refused.error?.code).toBe(ErrorCode.SessionAttached);
    const taken = await rightful.request("initialize", { clientName: "new", resumeSessionId: sessionId, takeover: true });
    expect(taken.result?.sessionId).toBe(sessionId);

    expect((await pendingRead).error).toEqual({
      code: ErrorCode.ConnectionClosed,
      message: "this connection's session was taken over by another connection",
    });
    expect(await stale.closed).toBe(4001);

    rightful.send({ method: "initialized" });
    await rightful.call("process/write", { processId: "cat", chunk: b64("mine\n") });
    const live = await rightful.next((message) => message.method === "process/output");
    expect(unb64(live.params?.chunk)).toBe("mine\n");
  });

  it("drops a connection that stops answering pings, so its session can be resumed", async () => {
    const daemon = await startTestDaemon({ pingIntervalMs: 50, pingTimeoutMs: 100 });
    // A client whose network vanished: it never answers a ping.
    const silent = new WebSocket(daemon.url, { autoPong: false });
    const closed = new Promise<number>((resolve) => silent.on("close", resolve));
    await new Promise((resolve) => silent.once("open", resolve));
    silent.send(JSON.stringify({ id: 1, method: "initialize", params: { clientName: "silent" } }));
    const sessionId = await new Promise<string>((resolve) =>
      silent.once("message", (data) => resolve((JSON.parse(data.toString()) as { result: { sessionId: string } }).result.sessionId)),
    );
    expect(await closed).toBe(1006);

    const back = await WireClient.connect(daemon.url);
    const resumed = await back.request("initialize", { clientName: "back", resumeSessionId: sessionId });
    expect(resumed.result?.sessionId).toBe(sessionId);
  });
});
