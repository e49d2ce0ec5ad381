/** Merging of reads into chunks, as a pure unit: what is held past the end of a turn, and what is not. */
import { describe, expect, it } from "vitest";
import { OutputCoalescer } from "../server/dist/process/output-coalescer.js";

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

function collector() {
  const chunks: string[] = [];
  const coalescer = new OutputCoalescer((stream, data) => chunks.push(`${stream}:${data.toString()}`));
  return { chunks, coalescer };
}

describe("output coalescer", () => {
  it("sends the reads of one turn as one chunk at the end of the turn", async () => {
    const { chunks, coalescer } = collector();
    coalescer.push("pty", Buffer.from("ab"));
    coalescer.push("pty", Buffer.from("cd"));
    expect(chunks).toEqual([]);
    await endOfTurn();
    expect(chunks).toEqual(["pty:abcd"]);
  });

  it("holds a full read past the end of its turn and merges the reads that follow it", async () => {
    const { chunks, coalescer } = collector();
    coalescer.push("pty", Buffer.from("full"), true);
    await endOfTurn();
    expect(chunks).toEqual([]);
    coalescer.push("pty", Buffer.from("+full"), true);
    await endOfTurn();
    expect(chunks).toEqual([]);
    // A smaller read ends the burst: sent at the end of its turn.
    coalescer.push("pty", Buffer.from("+tail"));
    await endOfTurn();
    expect(chunks).toEqual(["pty:full+full+tail"]);
  });

  it("sends a held full read on its own when nothing follows it", async () => {
    const { chunks, coalescer } = collector();
    coalescer.push("pty", Buffer.from("last"), true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(chunks).toEqual(["pty:last"]);
  });

  it("does not hold a full read that comes after a smaller one in the same turn", async () => {
    const { chunks, coalescer } = collector();
    coalescer.push("stdout", Buffer.from("small"));
    coalescer.push("stdout", Buffer.from("+full"), true);
    await endOfTurn();
    expect(chunks).toEqual(["stdout:small+full"]);
  });

  it("keeps streams apart, in order, and flushes what it holds on demand", () => {
    const { chunks, coalescer } = collector();
    coalescer.push("stdout", Buffer.from("out"), true);
    coalescer.push("stderr", Buffer.from("err"));
    coalescer.flush();
    expect(chunks).toEqual(["stdout:out", "stderr:err"]);
  });
});
