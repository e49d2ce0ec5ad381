/** The retention buffer and its gap accounting, as a pure unit. */
import { describe, expect, it } from "vitest";
import { CHUNK_OVERHEAD_BYTES as O, OutputLog } from "../server/dist/process/output-log.js";
import { RetentionBudget } from "../server/dist/process/retention-budget.js";

const bytes = (length: number) => Buffer.alloc(length, 0x61);

describe("OutputLog", () => {
  it("evicts the oldest chunks past the cap, each charged with its overhead, but always keeps the newest", () => {
    const log = new OutputLog(10 + O);
    log.append(1, "stdout", bytes(6));
    log.append(2, "stdout", bytes(6));
    expect(log.firstSeq).toBe(2);
    expect(log.retainedBytes).toBe(6);
    log.append(3, "stdout", bytes(50));
    expect(log.firstSeq).toBe(3);
    expect(log.retainedBytes).toBe(50);
  });

  it("skips the exit seq when counting lost chunks", () => {
    const log = new OutputLog(4 + O);
    log.append(1, "stdout", bytes(4));
    // seq 2 is the exit event: output after exit is still retained
    log.append(3, "stderr", bytes(4));
    log.append(4, "stderr", bytes(4));
    expect(log.gapAfter(0, 2)).toEqual({ fromSeq: 1, toSeq: 3, chunks: 2, bytes: 8, bytesExact: true });
    expect(log.gapAfter(3, 2)).toBeUndefined();
  });

  it("gives a lower bound, said so, for a cursor older than the eviction ledger", () => {
    const log = new OutputLog(10 * (1 + O));
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
    const log = new OutputLog(1_000 + 3 * O);
    [5, 5, 5].forEach((length, index) => log.append(index + 1, "stdout", bytes(length)));
    expect(log.readAfter(0, 7).map((chunk) => chunk.seq)).toEqual([1]);
    expect(log.readAfter(0, 10).map((chunk) => chunk.seq)).toEqual([1, 2]);
    expect(log.readAfter(0, 1).map((chunk) => chunk.seq)).toEqual([1]);
    expect(log.readAfter(2, Infinity).map((chunk) => chunk.seq)).toEqual([3]);
  });

  it("keeps at most upstream's 50,000 chunks, however small", () => {
    const log = new OutputLog(1024 * 1024 * 1024);
    for (let seq = 1; seq <= 50_010; seq++) log.append(seq, "stdout", bytes(1));
    expect(log.firstSeq).toBe(11);
    expect(log.retainedBytes).toBe(50_000);
    expect(log.chargedBytes).toBe(50_000 * (1 + O));
  });

  it("charges a shared budget, gives it back on eviction and dispose, and lets the budget evict", () => {
    const budget = new RetentionBudget(100 * (10 + O));
    const evictions: number[] = [];
    const logs = [new OutputLog(1024 * 1024, budget), new OutputLog(1024 * 1024, budget)];
    budget.setEvictor((bytesToFree) => {
      evictions.push(bytesToFree);
      logs[0]!.evictOldestCharge(bytesToFree);
    });
    for (let seq = 1; seq <= 60; seq++) logs[0]!.append(seq, "stdout", bytes(10));
    for (let seq = 1; seq <= 40; seq++) logs[1]!.append(seq, "stdout", bytes(10));
    expect(evictions).toEqual([]);
    expect(budget.usedBytes).toBe(100 * (10 + O));
    logs[1]!.append(41, "stdout", bytes(10));
    // Past the budget: freed down to seven eighths of it, from the log the evictor chose.
    expect(evictions.length).toBe(1);
    expect(budget.usedBytes).toBeLessThanOrEqual(Math.floor((100 * (10 + O) * 7) / 8));
    expect(logs[1]!.retainedBytes).toBe(410);
    expect(budget.usedBytes).toBe(logs[0]!.chargedBytes + logs[1]!.chargedBytes);
    logs[0]!.dispose();
    logs[1]!.dispose();
    expect(budget.usedBytes).toBe(0);
  });
});
