/**
 * Resume across disconnects, through a proxy that cuts the connection at
 * random moments (mid-frame too): the application must see every byte of
 * every process exactly once, in order.
 */
import { createHash, randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { connect, DisconnectedError, SessionLostError, type ExecmuxClient, type GapEvent } from "@execmux/client";
import type { ManagedProcess } from "../server/dist/process/managed-process.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { FaultProxy } from "./helpers/fault-proxy.js";
import { collect, strictlyIncreasing } from "./helpers/collect.js";
import { scratchDirectory } from "./helpers/scratch.js";

const sha256 = (data: Uint8Array | Buffer) => createHash("sha256").update(data).digest("hex");
const scratch = () => scratchDirectory("reconnect");
const fastReconnect = { initialDelayMs: 5, maxDelayMs: 50, giveUpAfterMs: 30_000 };


function countEvents(client: ExecmuxClient) {
  const counts = { disconnected: 0, reconnecting: 0, resumed: 0 };
  client.on("disconnected", () => counts.disconnected++);
  client.on("reconnecting", () => counts.reconnecting++);
  client.on("resumed", () => counts.resumed++);
  return counts;
}

describe("resume through random cuts", () => {
  it("delivers 20 MB of random bytes intact across 50+ cuts", async () => {
    const payload = randomBytes(20 * 1024 * 1024);
    const file = join(scratch(), "payload");
    writeFileSync(file, payload);
    const daemon = await startTestDaemon({ retainedBytes: 32 * 1024 * 1024 });
    const proxy = await FaultProxy.start(daemon.url, 1234);
    const client = await connect(proxy.url, { reconnect: fastReconnect });
    const counts = countEvents(client);
    proxy.cutRandomly(100_000, 500_000);

    const handle = await client.start({ argv: ["cat", file] });
    const { data, seqs, exitCode } = await collect(handle);
    expect(exitCode).toBe(0);
    expect(data.length).toBe(payload.length);
    expect(sha256(data)).toBe(sha256(payload));
    expect(strictlyIncreasing(seqs)).toBe(true);
    expect(proxy.cuts).toBeGreaterThanOrEqual(50);
    expect(counts.resumed).toBeGreaterThanOrEqual(50);
    expect(counts.disconnected).toBe(counts.resumed);
    client.close();
  });

  it("delivers numbered lines from a PTY intact across cuts", async () => {
    const daemon = await startTestDaemon({ retainedBytes: 8 * 1024 * 1024 });
    const proxy = await FaultProxy.start(daemon.url, 99);
    const client = await connect(proxy.url, { reconnect: fastReconnect });
    proxy.cutRandomly(20_000, 120_000);
    const handle = await client.start({ argv: ["seq", "1", "200000"], tty: true });
    const { data, seqs } = await collect(handle);
    const expected = Array.from({ length: 200_000 }, (_, index) => `${index + 1}\r\n`).join("");
    expect(data.toString()).toBe(expected);
    expect(strictlyIncreasing(seqs)).toBe(true);
    expect(proxy.cuts).toBeGreaterThanOrEqual(10);
    client.close();
  });

  it("delivers 20 processes at once on one socket intact across cuts", async () => {
    const directory = scratch();
    const payloads = Array.from({ length: 20 }, (_, index) => {
      const payload = randomBytes(1024 * 1024);
      writeFileSync(join(directory, `p${index}`), payload);
      return payload;
    });
    const daemon = await startTestDaemon({ retainedBytes: 4 * 1024 * 1024 });
    const proxy = await FaultProxy.start(daemon.url, 7);
    const client = await connect(proxy.url, { reconnect: fastReconnect });
    // Each process waits for a line on stdin before printing, so cuts start
    // only once every start has been answered (a start cut off is an error).
    const handles = await Promise.all(
      payloads.map((_, index) => client.start({ argv: ["sh", "-c", 'read go; cat "$0"', join(directory, `p${index}`)], pipeStdin: true })),
    );
    proxy.cutRandomly(100_000, 400_000);
    await Promise.all(handles.map((handle) => handle.write("go\n")));
    const results = await Promise.all(handles.map(collect));
    results.forEach((result, index) => {
      expect(sha256(result.data), `process ${index}`).toBe(sha256(payloads[index]!));
      expect(strictlyIncreasing(result.seqs)).toBe(true);
    });
    expect(proxy.cuts).toBeGreaterThanOrEqual(50);
    client.close();
  });
});

describe("requests in flight when the socket drops", () => {
  it("re-issues reads, retries writes once through writeId, and fails starts and terminates", async () => {
    const daemon = await startTestDaemon();
    const proxy = await FaultProxy.start(daemon.url);
    const client = await connect(proxy.url, { reconnect: fastReconnect });

    const cat = await client.start({ processId: "cat", argv: ["cat"], pipeStdin: true });
    const pendingRead = client.read("cat", { afterSeq: 0, waitMs: 20_000 });
    proxy.cutAll();
    // The read was re-issued on the new connection and still sees the output.
    await cat.write("after-cut\n");
    const read = await pendingRead;
    expect(Buffer.from(read.chunks[0]!.chunk, "base64").toString()).toBe("after-cut\n");

    // The daemon takes the write, the reply is lost; the retry carries the same writeId.
    proxy.cutInsteadOfReply('"result":{"status":"accepted"}');
    expect(await cat.write("exactly-once\n")).toBe("accepted");

    proxy.cutInsteadOfReply('"result":{"processId":"lost-reply"');
    const start = await client.start({ processId: "lost-reply", argv: ["sleep", "60"] }).catch((error: unknown) => error);
    expect(start).toBeInstanceOf(DisconnectedError);

    proxy.cutInsteadOfReply('"result":{"running":true}');
    const terminate = await cat.terminate().catch((error: unknown) => error);
    expect(terminate).toBeInstanceOf(DisconnectedError);

    // The terminate did happen: cat ends, and it saw the retried write once.
    const { data, exitCode } = await collect(cat);
    expect(data.toString()).toBe("after-cut\nexactly-once\n");
    expect(exitCode).toBe(143);
    expect(proxy.cuts).toBe(4);
    client.close();
  });
});

describe("long disconnects", () => {
  it("reports evicted output as a gap with exact counts, then continues live", async () => {
    const daemon = await startTestDaemon({ retainedBytes: 64 * 1024 });
    const proxy = await FaultProxy.start(daemon.url);
    const client = await connect(proxy.url, { reconnect: { ...fastReconnect, initialDelayMs: 20 } });
    const fifo = join(scratch(), "go");
    execFileSync("mkfifo", [fifo]);
    const handle = await client.start({
      processId: "flood",
      argv: ["sh", "-c", 'read x < "$0"; head -c 1000000 /dev/zero; read y; echo live', fifo],
      pipeStdin: true,
    });
    const gaps: GapEvent[] = [];
    handle.onGap((gap) => gaps.push(gap));
    const received: Buffer[] = [];
    handle.onOutput((event) => received.push(Buffer.from(event.data)));

    proxy.block();
    writeFileSync(fifo, "go\n");
    // Wait, on the daemon's side, until the whole megabyte was produced.
    const process = () => daemon.registry.all()[0]!.find("flood")!;
    await vi.waitUntil(async () => (await producedSoFar(process())) === 1_000_000, { timeout: 20_000 });
    proxy.unblock();

    await vi.waitUntil(() => gaps.length === 1);
    const replayed = Buffer.concat(received).length;
    expect(gaps[0]).toMatchObject({ processId: "flood", fromSeq: 1, bytesExact: true });
    expect(gaps[0]!.bytes + replayed).toBe(1_000_000);
    expect(gaps[0]!.chunks).toBe(gaps[0]!.toSeq);

    expect(await handle.write("y\n")).toBe("accepted");
    expect(await handle.wait()).toBe(0);
    expect(Buffer.concat(received).subarray(replayed).toString()).toBe("live\n");
    client.close();
  });

  it("tells the application the session is lost when it expired meanwhile", async () => {
    const daemon = await startTestDaemon({ sessionTtlMs: 100 });
    const proxy = await FaultProxy.start(daemon.url);
    const client = await connect(proxy.url, { reconnect: { ...fastReconnect, initialDelayMs: 50 } });
    const lost: SessionLostError[] = [];
    client.on("sessionLost", (error) => lost.push(error));
    const handle = await client.start({ argv: ["sleep", "60"] });
    const waiting = handle.wait().catch((error: unknown) => error);
    proxy.block();
    await vi.waitUntil(() => daemon.registry.size === 0);
    proxy.unblock();
    expect(await waiting).toBeInstanceOf(SessionLostError);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.message).toMatch(/unknown session id/);
    await expect(client.list()).rejects.toBeInstanceOf(SessionLostError);
  });

  it("gives up after the deadline when the daemon stays unreachable", async () => {
    const daemon = await startTestDaemon();
    const proxy = await FaultProxy.start(daemon.url);
    const client = await connect(proxy.url, { reconnect: { initialDelayMs: 10, maxDelayMs: 20, giveUpAfterMs: 200 } });
    const attempts: number[] = [];
    client.on("reconnecting", ({ attempt }) => attempts.push(attempt));
    const lost = new Promise<SessionLostError>((resolve) => client.on("sessionLost", resolve));
    proxy.block();
    expect((await lost).message).toMatch(/gave up reconnecting/);
    expect(attempts.length).toBeGreaterThan(1);
    expect(attempts).toEqual(attempts.map((_, index) => index + 1));
  });
});

/** Bytes a process has produced so far, as the process host has them: what it evicted (a gap, exact from seq 0) plus what it retains. */
async function producedSoFar(process: ManagedProcess): Promise<number> {
  const { gap, chunks } = await process.read(0, Number.POSITIVE_INFINITY);
  return (gap?.bytes ?? 0) + chunks.reduce((sum, chunk) => sum + chunk.data.length, 0);
}
