/** Processes belong to the session, not the socket: detach, resume, expiry. */
import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { isRunning } from "./helpers/procfs.js";
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
    const pids = [list.processes[0]!.pid, Number(client.output("s").trim())];
    client.close();
    await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]));

    const late = await WireClient.connect(daemon.url);
    const reply = await late.request("initialize", { clientName: "b", resumeSessionId: sessionId });
    expect(reply.error).toEqual({ code: ErrorCode.InvalidRequest, message: `unknown session id ${sessionId}` });
  });
});
