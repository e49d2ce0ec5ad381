/** The retention buffer and its gap accounting, as a pure unit. */
import { describe, expect, it } from "vitest";
import { OutputLog } from "../server/dist/process/output-log.js";

const bytes = (length: number) => Buffer.alloc(length, 0x61);

describe("OutputLog", () => {
  it("evicts the oldest chunks past the cap but always keeps the newest", () => {
    const log = new OutputLog(10);
    log.append(1, "stdout", bytes(6));
    log.append(2, "stdout", bytes(6));
    expect(log.firstSeq).toBe(2);
    expect(log.retainedBytes).toBe(6);
    log.append(3, "stdout", bytes(50));
    expect(log.firstSeq).toBe(3);
    expect(log.retainedBytes).toBe(50);
  });

  it("skips the exit seq when counting lost chunks", () => {
    const log = new OutputLog(4);
    log.append(1, "stdout", bytes(4));
    // seq 2 is the exit event: output after exit is still retained
    log.append(3, "stderr", bytes(4));
    log.append(4, "stderr", bytes(4));
    expect(log.gapAfter(0, 2)).toEqual({ fromSeq: 1, toSeq: 3, chunks: 2, bytes: 8, bytesExact: true });
    expect(log.gapAfter(3, 2)).toBeUndefined();
  });

  it("gives a lower bound, said so, for a cursor older than the eviction ledger", () => {
    const log = new OutputLog(10);
    for (let seq = 1; seq <= 10_000; seq++) log.append(seq, "stdout", bytes(1));
    const recent = log.gapAfter(9_000, undefined);
    expect(recent).toEqual({ fromSeq: 9_001, toSeq: 9_990, chunks: 990, bytes: 990, bytesExact: true });
    const ancient = log.gapAfter(100, undefined)!;
    expect(ancient.chunks).toBe(9_890);
    expect(ancient.bytesExact).toBe(false);
    expect(ancient.bytes).toBeLessThanOrEqual(9_890);
    expect(ancient.bytes).toBeGreaterThan(4_000);
    // From the very beginning, everything evicted is known exactly.
    expect(log.gapAfter(0, undefined)).toEqual({ fromSeq: 1, toSeq: 9_990, chunks: 9_990, bytes: 9_990, bytesExact: true });
  });

  it("reads after a cursor with maxBytes, always returning the first chunk", () => {
    const log = new OutputLog(1_000);
    [5, 5, 5].forEach((length, index) => log.append(index + 1, "stdout", bytes(length)));
    expect(log.readAfter(0, 7).map((chunk) => chunk.seq)).toEqual([1]);
    expect(log.readAfter(0, 10).map((chunk) => chunk.seq)).toEqual([1, 2]);
    expect(log.readAfter(0, 1).map((chunk) => chunk.seq)).toEqual([1]);
    expect(log.readAfter(2, Infinity).map((chunk) => chunk.seq)).toEqual([3]);
  });
});
