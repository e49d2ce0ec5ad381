/** The SDK's ack batching as a pure unit, on fake timers. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AckBatcher } from "../client-sdk/dist/ack-batcher.js";

const KiB = 1024;

describe("AckBatcher", () => {
  let sent: [string, number][];
  let acks: AckBatcher;
  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
    // As the SDK by default: the daemon's shared window 64 KiB, the client's own 16 MiB.
    acks = new AckBatcher((processId, bytes) => sent.push([processId, bytes]), 16 * KiB, 4096 * KiB);
  });
  afterEach(() => vi.useRealTimers());

  it("sends a burst of frames as one ack, a moment later, not one ack per frame", () => {
    for (let frame = 0; frame < 10; frame++) acks.add("flood", 64 * KiB);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual([["flood", 640 * KiB]]);
  });

  it("acks at once when a quarter of the client's own window is reached", () => {
    for (let frame = 0; frame < 64; frame++) acks.add("fast", 64 * KiB);
    expect(sent).toEqual([["fast", 4096 * KiB]]);
  });

  it("holds credit below the smallest ack until more comes, and acks each process on its own", () => {
    acks.add("a", 10 * KiB);
    vi.advanceTimersByTime(5);
    expect(sent).toEqual([]);
    acks.add("a", 10 * KiB);
    acks.add("b", 16 * KiB);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual([
      ["a", 20 * KiB],
      ["b", 16 * KiB],
    ]);
  });

  it("forgets a closed process's credit, so a client of many short processes does not grow", () => {
    acks.add("done", 20 * KiB);
    acks.forget("done");
    vi.advanceTimersByTime(10);
    expect(sent).toEqual([]);
  });

  it("forgets credit on reset: a new socket counts from zero", () => {
    acks.add("a", 32 * KiB);
    acks.reset();
    vi.advanceTimersByTime(10);
    expect(sent).toEqual([]);
    acks.add("a", 8 * KiB);
    vi.advanceTimersByTime(10);
    expect(sent).toEqual([]);
  });
});
