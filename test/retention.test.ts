/**
 * Retained output, as a client sees it through a real daemon (the process
 * host keeps it): the per-process cap with each chunk's bookkeeping charged,
 * eviction oldest first but never the newest chunk, upstream's 50,000-chunk
 * cap, and gaps that say exactly what was lost, or a lower bound said to be
 * one for a cursor older than the host's ledger of evicted chunks.
 */
import { describe, expect, it } from "vitest";
import { decodeBinaryOutputFrame } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { WireClient, b64 } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";
/** What each retained chunk is charged beyond its bytes (--retained-bytes' description: "about 176 bytes"). */
const CHUNK_OVERHEAD = 176;
/** Upstream's cap on retained chunks per process. */
const MAX_CHUNKS = 50_000;

interface Info {
  processId: string;
  nextSeq: number;
  firstRetainedSeq: number;
  retainedBytes: number;
}
interface Gap {
  fromSeq: number;
  toSeq: number;
  chunks: number;
  bytes: number;
  bytesExact: boolean;
}
interface Read {
  chunks: { seq: number; stream: string; chunk: string }[];
  gap?: Gap;
}

const start = (client: WireClient, processId: string, argv: string[], extra: Record<string, unknown> = {}) =>
  client.call("process/start", { processId, argv, cwd: "/", env: { PATH }, tty: false, ...extra });

async function infoOf(client: WireClient, processId: string): Promise<Info> {
  const { processes } = await client.call<{ processes: Info[] }>("process/list", {});
  return processes.find((process) => process.processId === processId)!;
}

/** Every output chunk the client received live, by seq: its size. */
function liveChunks(client: WireClient, processId: string): Map<number, Buffer> {
  return new Map(
    client
      .notifications(processId)
      .filter((message) => message.method === "process/output")
      .map((message) => [Number(message.params?.seq), Buffer.from(String(message.params?.chunk), "base64")]),
  );
}

const sum = (sizes: Iterable<number>) => [...sizes].reduce((total, size) => total + size, 0);

describe("retained output", () => {
  it("keeps at most --retained-bytes per process, each chunk charged with its bookkeeping, evicting the oldest first", async () => {
    const cap = 20_000;
    const daemon = await startTestDaemon({ retainedBytes: cap });
    const client = await WireClient.ready(daemon.url);
    // Lines a moment apart: a few hundred chunks of a few bytes, far more than the cap holds with their bookkeeping.
    await start(client, "lines", ["perl", "-e", '$| = 1; for (1 .. 400) { print "line $_\\n"; select(undef, undef, undef, 0.001) }']);
    await client.closedOf("lines");
    const live = liveChunks(client, "lines");
    expect(sum([...live.values()].map((data) => data.length))).toBe(sum(Array.from({ length: 400 }, (_, index) => `line ${index + 1}\n`.length)));

    const info = await infoOf(client, "lines");
    const retained = [...live].filter(([seq]) => seq >= info.firstRetainedSeq);
    const retainedBytes = sum(retained.map(([, data]) => data.length));
    expect(info.retainedBytes).toBe(retainedBytes);
    expect(retainedBytes + retained.length * CHUNK_OVERHEAD).toBeLessThanOrEqual(cap);
    // Only what had to go went: the chunk before the first retained one would not have fit.
    const evictedLast = live.get(info.firstRetainedSeq - 1)!;
    expect(evictedLast).toBeDefined();
    expect(retainedBytes + evictedLast.length + (retained.length + 1) * CHUNK_OVERHEAD).toBeGreaterThan(cap);

    // A read from the start is told what it missed, exactly, then gets every retained chunk as it was sent live.
    const read = await client.call<Read>("process/read", { processId: "lines", afterSeq: 0 });
    const evicted = [...live].filter(([seq]) => seq < info.firstRetainedSeq);
    expect(read.gap).toEqual({ fromSeq: 1, toSeq: info.firstRetainedSeq - 1, chunks: evicted.length, bytes: sum(evicted.map(([, data]) => data.length)), bytesExact: true });
    expect(read.chunks.map((chunk) => [chunk.seq, chunk.chunk])).toEqual(retained.map(([seq, data]) => [seq, data.toString("base64")]));
  });

  it("always keeps a process's newest chunk, even one larger than the cap", async () => {
    const daemon = await startTestDaemon({ retainedBytes: 1 });
    const client = await WireClient.ready(daemon.url);
    await start(client, "cat", ["cat"], { pipeStdin: true });
    for (const line of ["first\n", "second, longer\n"]) {
      await client.call("process/write", { processId: "cat", chunk: b64(line) });
      await client.next((message) => message.method === "process/output" && Buffer.from(String(message.params?.chunk), "base64").toString().endsWith(line));
    }
    const running = await infoOf(client, "cat");
    const newest = [...liveChunks(client, "cat")].at(-1)!;
    expect(newest[1].toString()).toBe("second, longer\n");
    expect(running).toMatchObject({ firstRetainedSeq: newest[0], retainedBytes: newest[1].length });
    const read = await client.call<Read>("process/read", { processId: "cat", afterSeq: 0 });
    expect(read.chunks).toEqual([{ seq: newest[0], stream: "stdout", chunk: newest[1].toString("base64") }]);
    expect(read.gap).toMatchObject({ fromSeq: 1, toSeq: newest[0] - 1, bytes: "first\n".length, bytesExact: true });

    // After the exit and the close, the newest output chunk is still the one kept.
    await client.call("process/closeStdin", { processId: "cat" });
    await client.closedOf("cat");
    expect(await infoOf(client, "cat")).toMatchObject({ firstRetainedSeq: newest[0], retainedBytes: newest[1].length });
  });

  it("keeps at most upstream's 50,000 chunks, however small, and gives a lower bound of what an ancient cursor missed", async () => {
    const total = 60_000_000;
    // Every byte fits the per-process cap: only the chunk count can evict. A
    // 1 KiB process queue makes flow control cut chunks at 1 KiB, so 60 MB
    // are at least 58,594 chunks: more than the 50,000 kept plus the host's
    // ledger of the last 4,096 evicted ones.
    const daemon = await startTestDaemon({ retainedBytes: 256 * 1024 * 1024, processQueueBytes: 1024 });
    const client = await WireClient.connect(daemon.url);
    await client.call("initialize", { clientName: "chunks", binaryOutput: true });
    client.send({ method: "initialized" });
    await start(client, "many", ["head", "-c", String(total), "/dev/zero"]);
    await client.closedOf("many");
    const sizes = new Map<number, number>();
    for (const frame of client.binaryFrames) {
      const decoded = decodeBinaryOutputFrame(frame)!;
      sizes.set(decoded.seq, decoded.data.length);
    }
    expect(sum(sizes.values())).toBe(total);
    // Output seqs in order (the exit's seq may fall among them: output can outlast it).
    const seqs = [...sizes.keys()].sort((a, b) => a - b);
    expect(seqs.length).toBeGreaterThan(MAX_CHUNKS + 4096 + 1000);
    const inRange = (from: number, to: number) => seqs.filter((seq) => seq >= from && seq <= to);
    const bytesBetween = (from: number, to: number) => sum(inRange(from, to).map((seq) => sizes.get(seq)!));

    const info = await infoOf(client, "many");
    expect(inRange(info.firstRetainedSeq, Infinity)).toHaveLength(MAX_CHUNKS);
    expect(info.retainedBytes).toBe(bytesBetween(info.firstRetainedSeq, Infinity));

    const gapAfter = async (afterSeq: number) => (await client.call<Read>("process/read", { processId: "many", afterSeq, maxBytes: 1 })).gap!;
    // From the start, and from a cursor among the last evicted chunks: exact.
    const evictedTo = info.firstRetainedSeq - 1;
    const evicted = inRange(1, evictedTo);
    expect(await gapAfter(0)).toEqual({ fromSeq: 1, toSeq: evictedTo, chunks: evicted.length, bytes: bytesBetween(1, evictedTo), bytesExact: true });
    const recent = evicted.at(-1000)! - 1;
    expect(await gapAfter(recent)).toEqual({ fromSeq: recent + 1, toSeq: evictedTo, chunks: 1000, bytes: bytesBetween(recent + 1, evictedTo), bytesExact: true });
    // From one older than the ledger: the chunks exactly, the bytes a lower bound, said to be one.
    const ancient = await gapAfter(100);
    expect(ancient).toMatchObject({ fromSeq: 101, toSeq: evictedTo, chunks: inRange(101, evictedTo).length, bytesExact: false });
    expect(ancient.bytes).toBeLessThan(bytesBetween(101, evictedTo));
    // At least what the ledger still knows: its last 4,096 evicted chunks.
    expect(ancient.bytes).toBeGreaterThanOrEqual(bytesBetween(evicted.at(-4096)!, evictedTo));
  }, 120_000);
});
