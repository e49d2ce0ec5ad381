/** Flow control correctness (not speed): bounded memory, nothing lost, fairness, credits, binary frames. */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { decodeBinaryOutputFrame } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient, b64, unb64 } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

/** True while the process sleeps in a write to its (full) stdout. */
function blockedOnWrite(pid: number): boolean {
  try {
    const wchan = readFileSync(`/proc/${pid}/wchan`, "latin1");
    return ["sock_alloc_send_pskb", "unix_stream_sendmsg", "pipe_write", "anon_pipe_write", "n_tty_write", "wait_woken"].includes(wchan);
  } catch {
    return false;
  }
}
const outputBytes = (client: WireClient, processId: string) =>
  client
    .notifications(processId)
    .filter((message) => message.method === "process/output")
    .reduce((sum, message) => sum + Buffer.from(String(message.params?.chunk), "base64").length, 0);

/** Acknowledges everything received of a process, as it arrives, until the process has closed. */
async function ackUntilClosed(client: WireClient, processId: string): Promise<void> {
  let acked = 0;
  await vi.waitUntil(
    () => {
      const received = outputBytes(client, processId);
      if (received > acked) {
        client.send({ method: "process/ack", params: { processId, bytes: received - acked } });
        acked = received;
      }
      return client.notifications(processId).some((message) => message.method === "process/closed");
    },
    { timeout: 20_000, interval: 5 },
  );
}

describe("flow control", () => {
  it("pauses a flooding process for a stalled client, keeps memory bounded, then delivers everything in order", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await client.call("process/start", { processId: "echo", argv: ["cat"], cwd: "/", env: { PATH }, pipeStdin: true, tty: false });
    const rssBefore = process.memoryUsage().rss;
    client.pauseReading();
    // 2 GB offered: far more than the daemon may hold for a client that reads nothing.
    client.send({ id: 100, method: "process/start", params: { processId: "flood", argv: ["head", "-c", "2000000000", "/dev/zero"], cwd: "/", env: { PATH }, tty: false } });
    const flood = () => daemon.registry.all()[0]!.find("flood");
    await vi.waitUntil(() => flood()?.paused === true, { timeout: 20_000 });
    // Backpressure reaches the child: it sleeps in write() instead of the daemon buffering.
    await vi.waitUntil(() => blockedOnWrite(flood()!.pid!), { timeout: 20_000 });
    const producedWhilePaused = flood()!.nextSeq;
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
    expect(flood()!.nextSeq).toBe(producedWhilePaused);

    client.resumeReading();
    await client.next((message) => message.id === 100);
    // The other process on the socket is served while the flood catches up.
    await client.call("process/write", { processId: "echo", chunk: b64("ping\n") });
    await client.next((message) => message.method === "process/output" && message.params?.processId === "echo");
    expect(flood()!.closed).toBe(false);

    await client.call("process/terminate", { processId: "flood" });
    await client.closedOf("flood");
    const seqs = client.notifications("flood").map((message) => Number(message.params?.seq));
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    // Every byte the process wrote reached the client: what the host still retains plus what it evicted (told exactly from seq 0).
    const read = await client.call<{ chunks: { chunk: string }[]; gap?: { bytes: number; bytesExact: boolean } }>("process/read", { processId: "flood", afterSeq: 0 });
    expect(read.gap?.bytesExact).toBe(true);
    const produced = (read.gap?.bytes ?? 0) + read.chunks.reduce((sum, chunk) => sum + Buffer.from(chunk.chunk, "base64").length, 0);
    expect(outputBytes(client, "flood")).toBe(produced);
  });

  it("with ackWindowBytes, sends no more than the window until the client acknowledges", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.connect(daemon.url);
    await client.call("initialize", { clientName: "acks", ackWindowBytes: 65_536 });
    client.send({ method: "initialized" });
    await client.call("process/start", { processId: "f", argv: ["head", "-c", "3000000", "/dev/zero"], cwd: "/", env: { PATH }, tty: false });
    const flood = () => daemon.registry.all()[0]!.find("f")!;
    await vi.waitUntil(() => flood().paused && outputBytes(client, "f") > 0);
    const delivered = outputBytes(client, "f");
    // One chunk may cross the window before the pause takes effect.
    expect(delivered).toBeLessThanOrEqual(65_536 + 65_536);
    await ackUntilClosed(client, "f");
    await client.closedOf("f");
    expect(outputBytes(client, "f")).toBe(3_000_000);
  });

  it.each([false, true])("holds each process to the smaller shared window while another process of the socket also sends output (tty %s)", async (tty) => {
    const daemon = await startTestDaemon({ sharedAckWindowBytes: 65_536 });
    const client = await WireClient.connect(daemon.url);
    const result = await client.call("initialize", { clientName: "shared", ackWindowBytes: 16 * 1024 * 1024 });
    expect(result).toMatchObject({ ackWindowBytes: 16 * 1024 * 1024, sharedAckWindowBytes: 65_536 });
    client.send({ method: "initialized" });
    const start = (processId: string, script: string) =>
      client.call("process/start", { processId, argv: ["sh", "-c", script], cwd: "/", env: { PATH }, tty });
    await start("ticker", "while :; do echo tick; sleep 0.01; done");
    await vi.waitUntil(() => client.output("ticker").includes("tick"));
    // Alone, this flood would fit in the client's 16 MiB window and never pause.
    await start("flood", "head -c 4000000 /dev/zero");
    const flood = () => daemon.registry.all()[0]!.find("flood")!;
    await vi.waitUntil(() => flood().paused && outputBytes(client, "flood") > 0, { timeout: 20_000 });
    // One chunk may cross the window before the pause takes effect.
    expect(outputBytes(client, "flood")).toBeLessThanOrEqual(65_536 + 65_536);
    await ackUntilClosed(client, "flood");
    expect(outputBytes(client, "flood")).toBe(4_000_000);
    await client.call("process/terminate", { processId: "ticker" });
  });
});

describe("chunk sizes", () => {
  it("keeps JSON-mode chunks near 64 KiB, and binary ones within 256 KiB, while a fast writer keeps the pipe full", async () => {
    const daemon = await startTestDaemon();
    const sizesFor = async (binaryOutput: boolean) => {
      const client = await WireClient.connect(daemon.url);
      await client.call("initialize", { clientName: "sizes", binaryOutput });
      client.send({ method: "initialized" });
      await client.call("process/start", { processId: "fast", argv: ["head", "-c", "8000000", "/dev/zero"], cwd: "/", env: { PATH }, tty: false });
      await client.closedOf("fast");
      const sizes = binaryOutput
        ? client.binaryFrames.map((frame) => decodeBinaryOutputFrame(frame)!.data.length)
        : client.notifications("fast").filter((message) => message.method === "process/output").map((message) => unb64(String(message.params?.chunk)).length);
      client.close();
      await client.closed;
      return sizes;
    };
    const json = await sizesFor(false);
    expect(json.reduce((sum, size) => sum + size, 0)).toBe(8_000_000);
    // One read of the pipe's capacity, plus what smaller reads before it in the same turn merged into.
    expect(Math.max(...json)).toBeLessThan(2 * 64 * 1024);
    const binary = await sizesFor(true);
    expect(binary.reduce((sum, size) => sum + size, 0)).toBe(8_000_000);
    expect(Math.max(...binary)).toBeLessThanOrEqual(256 * 1024);
  });

  it("keeps a fast PTY writer's chunks within 64 KiB, and within a quarter of a small credit window", async () => {
    const daemon = await startTestDaemon();
    const sizesFor = async (ackWindowBytes: number | undefined) => {
      const client = await WireClient.connect(daemon.url);
      await client.call("initialize", { clientName: "pty-sizes", binaryOutput: true, ...(ackWindowBytes ? { ackWindowBytes } : {}) });
      client.send({ method: "initialized" });
      await client.call("process/start", { processId: "fast", argv: ["head", "-c", "4000000", "/dev/zero"], cwd: "/", env: { PATH }, tty: true });
      // Acks whatever arrived, then waits for the next frame (or the close).
      let closed = false;
      const closing = client.closedOf("fast").then(() => (closed = true));
      let acked = 0;
      while (!closed) {
        const received = client.binaryFrames.reduce((sum, frame) => sum + decodeBinaryOutputFrame(frame)!.data.length, 0);
        if (ackWindowBytes && received > acked) {
          client.send({ method: "process/ack", params: { processId: "fast", bytes: received - acked } });
          acked = received;
        }
        await Promise.race([client.next((message) => message.method === "binary"), closing]);
      }
      const sizes = client.binaryFrames.map((frame) => decodeBinaryOutputFrame(frame)!.data.length);
      client.close();
      await client.closed;
      return sizes;
    };
    const free = await sizesFor(undefined);
    expect(free.reduce((sum, size) => sum + size, 0)).toBe(4_000_000);
    expect(Math.max(...free)).toBeLessThanOrEqual(64 * 1024);
    // A 64 KiB window: chunks of at most a quarter of it, 16 KiB. One read of
    // the terminal is sized by the kernel (usually 4 KiB, now and then more),
    // so the bound is checked on nine chunks in ten.
    const small = await sizesFor(64 * 1024);
    expect(small.reduce((sum, size) => sum + size, 0)).toBe(4_000_000);
    const sorted = [...small].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length * 0.9)]).toBeLessThanOrEqual(16 * 1024);
  });
});

describe("binary output frames", () => {
  it("sends process/output as binary frames when asked, and everything else as JSON", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.connect(daemon.url);
    await client.call("initialize", { clientName: "bin", binaryOutput: true });
    client.send({ method: "initialized" });
    await client.call("process/start", { processId: "ünï", argv: ["sh", "-c", "printf 'héllo'; printf 'err' >&2"], cwd: "/", env: { PATH }, tty: false });
    await client.closedOf("ünï");
    const frames = client.binaryFrames.map((frame) => decodeBinaryOutputFrame(frame)!);
    expect(frames.map((frame) => frame.processId)).toEqual(["ünï", "ünï"]);
    const byStream = Object.fromEntries(frames.map((frame) => [frame.stream, Buffer.from(frame.data).toString()]));
    expect(byStream).toEqual({ stdout: "héllo", stderr: "err" });
    // Output may come before or after the exit event; the close is last.
    const jsonSeqs = client.notifications("ünï").map((message) => [message.method, Number(message.params?.seq)] as const);
    expect([...frames.map((frame) => frame.seq), ...jsonSeqs.map(([, seq]) => seq)].sort()).toEqual([1, 2, 3, 4]);
    expect(jsonSeqs.map(([method]) => method)).toEqual(["process/exited", "process/closed"]);
    expect(jsonSeqs[1]![1]).toBe(4);
    // Reads stay JSON with base64.
    const read = await client.call<{ chunks: { chunk: string }[] }>("process/read", { processId: "ünï" });
    expect(read.chunks.map((chunk) => unb64(chunk.chunk)).sort()).toEqual(["err", "héllo"]);
  });

  // Large reads are framed in place, in room left in front of them in the read buffer; the
  // longest processId (256 four-byte characters) needs all of that room. `cat` fills the pipe
  // (reads merged into one chunk); 20,000-byte writes a moment apart are read one at a time,
  // several chunks to a buffer, each with its own room.
  it.each([
    ["a pipe kept full", (file: string) => ["cat", file]],
    ["writes a moment apart", (file: string) => ["sh", "-c", `for i in $(seq 0 44); do dd if=${file} bs=20000 skip=$i count=1 status=none; sleep 0.002; done`]],
  ])("delivers large output byte for byte, live and again when replayed, with the longest processId (%s)", async (_name, argvFor) => {
    const file = join(scratchDirectory("frames"), "random");
    const random = randomBytes(900_000);
    writeFileSync(file, random);
    const processId = "🚀".repeat(256);
    const daemon = await startTestDaemon();
    const bytesOf = (client: WireClient) => {
      const frames = client.binaryFrames.map((frame) => decodeBinaryOutputFrame(frame)!);
      expect(frames.every((frame) => frame.processId === processId)).toBe(true);
      expect(frames.map((frame) => frame.seq)).toEqual([...frames.map((frame) => frame.seq)].sort((a, b) => a - b));
      return Buffer.concat(frames.map((frame) => frame.data));
    };

    const live = await WireClient.connect(daemon.url);
    const { sessionId } = await live.call<{ sessionId: string }>("initialize", { clientName: "live", binaryOutput: true });
    live.send({ method: "initialized" });
    await live.call("process/start", { processId, argv: argvFor(file), cwd: "/", env: { PATH }, tty: false });
    await live.closedOf(processId);
    expect(bytesOf(live).equals(random)).toBe(true);
    live.close();
    await live.closed;

    const replayed = await WireClient.connect(daemon.url);
    await replayed.call("initialize", { clientName: "again", binaryOutput: true, resumeSessionId: sessionId, cursors: { [processId]: 0 } });
    await replayed.closedOf(processId);
    expect(bytesOf(replayed).equals(random)).toBe(true);
  });
});

describe("pooled JSON frames and a stalled client", () => {
  // Large JSON output frames are reused once nothing holds their bytes
  // (slab-pool.ts, envelope.ts), and the test daemon poisons each one that
  // comes back: bytes released while a frame still waited for the socket
  // show up here. Binary frames come from the process host as they are, and
  // a PTY's output too: each must arrive whole after a stall, and again on resume.
  it.each([
    { mode: "binary frames", binaryOutput: true, tty: false },
    { mode: "JSON", binaryOutput: false, tty: false },
    // base64 text passes a terminal unchanged.
    { mode: "binary frames, PTY", binaryOutput: true, tty: true },
  ])("deliver two streams byte for byte to a client that stalled, and the retained tails again on resume ($mode)", async ({ binaryOutput, tty }) => {
    const directory = scratchDirectory("slabs");
    const files = ["a", "b"].map((processId) => {
      const path = join(directory, processId);
      const bytes = tty ? Buffer.from(randomBytes(9_000_000).toString("base64")) : randomBytes(12_000_000);
      writeFileSync(path, bytes);
      return { processId, path, bytes };
    });
    // Little retained, so the resume replays only a tail.
    const daemon = await startTestDaemon({ retainedBytes: 300_000 });
    const received = (client: WireClient, processId: string) =>
      binaryOutput
        ? Buffer.concat(
            client.binaryFrames.map((frame) => decodeBinaryOutputFrame(frame)!).filter((frame) => frame.processId === processId).map((frame) => frame.data),
          )
        : Buffer.concat(
            client
              .notifications(processId)
              .filter((message) => message.method === "process/output")
              .map((message) => Buffer.from(String(message.params?.chunk), "base64")),
          );

    const client = await WireClient.connect(daemon.url);
    const { sessionId } = await client.call<{ sessionId: string }>("initialize", { clientName: "stalls", binaryOutput });
    client.send({ method: "initialized" });
    client.pauseReading();
    for (const { processId, path } of files) {
      client.send({ id: processId, method: "process/start", params: { processId, argv: ["cat", path], cwd: "/", env: { PATH }, tty } });
    }
    const paused = (processId: string) => daemon.registry.all()[0]?.find(processId)?.paused === true;
    await vi.waitUntil(() => files.every(({ processId }) => paused(processId)), { timeout: 20_000 });
    client.resumeReading();
    for (const { processId, bytes } of files) {
      await client.closedOf(processId);
      expect(received(client, processId).equals(bytes)).toBe(true);
    }
    client.close();
    await client.closed;

    const resumed = await WireClient.connect(daemon.url);
    const cursors = Object.fromEntries(files.map(({ processId }) => [processId, 0]));
    await resumed.call("initialize", { clientName: "resumes", binaryOutput, resumeSessionId: sessionId, cursors });
    for (const { processId, bytes } of files) {
      await resumed.closedOf(processId);
      const tail = received(resumed, processId);
      expect(tail.length).toBeGreaterThanOrEqual(300_000 - 256 * 1024);
      expect(tail.equals(bytes.subarray(bytes.length - tail.length))).toBe(true);
    }
  });
});
