/**
 * Merging of reads into chunks, as a pure unit: what is held past the end of
 * a turn, and what is not. Fake timers: "the end of the turn" (setImmediate)
 * and the hold's bound (setTimeout) run only when the test says so.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OutputCoalescer } from "../server/dist/process/output-coalescer.js";

/** Runs what is due now (the end of the turn), not what waits for time to pass. */
const endOfTurn = () => vi.advanceTimersByTime(0);

function collector() {
  const chunks: string[] = [];
  const coalescer = new OutputCoalescer((stream, data) => chunks.push(`${stream}:${data.toString()}`));
  return { chunks, coalescer };
}

describe("output coalescer", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends the reads of one turn as one chunk at the end of the turn", () => {
    const { chunks, coalescer } = collector();
    coalescer.push("pty", Buffer.from("ab"));
    coalescer.push("pty", Buffer.from("cd"));
    expect(chunks).toEqual([]);
    endOfTurn();
    expect(chunks).toEqual(["pty:abcd"]);
  });

  it("holds a full read past the end of its turn and merges the reads that follow it", () => {
    const { chunks, coalescer } = collector();
    coalescer.push("pty", Buffer.from("full"), "more-waiting");
    endOfTurn();
    expect(chunks).toEqual([]);
    coalescer.push("pty", Buffer.from("+full"), "more-waiting");
    endOfTurn();
    expect(chunks).toEqual([]);
    // A smaller read ends the burst: sent at the end of its turn.
    coalescer.push("pty", Buffer.from("+tail"));
    endOfTurn();
    expect(chunks).toEqual(["pty:full+full+tail"]);
  });

  it("sends a held full read on its own when nothing follows it", () => {
    const { chunks, coalescer } = collector();
    coalescer.push("pty", Buffer.from("last"), "more-waiting");
    vi.runAllTimers();
    expect(chunks).toEqual(["pty:last"]);
  });

  it("does not hold a full read that comes after a smaller one in the same turn", () => {
    const { chunks, coalescer } = collector();
    coalescer.push("stdout", Buffer.from("small"));
    coalescer.push("stdout", Buffer.from("+full"), "more-waiting");
    endOfTurn();
    expect(chunks).toEqual(["stdout:small+full"]);
  });

  it("sends a read that emptied its pipe at once, with what it merged this turn", () => {
    const { chunks, coalescer } = collector();
    coalescer.push("stdout", Buffer.from("a"));
    coalescer.push("stdout", Buffer.from("b"), "drained");
    expect(chunks).toEqual(["stdout:ab"]);
    endOfTurn();
    expect(chunks).toEqual(["stdout:ab"]);
  });

  it("never merges past its bound: what would cross it goes out first", () => {
    const { chunks, coalescer } = collector();
    coalescer.limitTo(6);
    coalescer.push("pty", Buffer.from("1234"), "more-waiting");
    coalescer.push("pty", Buffer.from("5678"), "more-waiting");
    expect(chunks).toEqual(["pty:1234"]);
    coalescer.push("pty", Buffer.from("9"));
    endOfTurn();
    expect(chunks).toEqual(["pty:1234", "pty:56789"]);
    // One read larger than the bound still goes out whole, at once.
    coalescer.push("pty", Buffer.from("abcdefgh"));
    expect(chunks).toEqual(["pty:1234", "pty:56789", "pty:abcdefgh"]);
  });

  it("keeps streams apart, in order, and flushes what it holds on demand", () => {
    const { chunks, coalescer } = collector();
    coalescer.push("stdout", Buffer.from("out"), "more-waiting");
    coalescer.push("stderr", Buffer.from("err"));
    coalescer.flush();
    expect(chunks).toEqual(["stdout:out", "stderr:err"]);
    vi.runAllTimers();
    expect(chunks).toEqual(["stdout:out", "stderr:err"]);
  });
});
