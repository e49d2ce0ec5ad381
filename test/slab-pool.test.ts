/** Reuse of read slabs, as a pure unit: a slab comes back only once every hold on it is released. */
import { describe, expect, it } from "vitest";
import { poisonReturnedSlabs } from "@execmux/server";
import { decodeBinaryOutputFrame } from "@execmux/shared";
import { takeFramedSlab, withFrameRoom } from "../server/dist/process/output-buffers.js";
import { releaseSlab, retainSlab, takeSlab } from "../server/dist/process/slab-pool.js";
import { encodeBinaryOutput } from "../server/dist/rpc/envelope.js";

const SIZE = 4096;

describe("slab pool", () => {
  it("reuses a slab only after the reader and every holder of a chunk in it have let go, poisoned", () => {
    poisonReturnedSlabs(true);
    const slab = takeSlab(SIZE);
    slab.fill(1);
    const chunk = slab.subarray(100, 200);
    expect(retainSlab(chunk)).toBe(true);
    // A frame built around the chunk is another view of the same slab.
    const frame = Buffer.from(chunk.buffer, chunk.byteOffset - 10, 110);
    expect(retainSlab(frame)).toBe(true);

    releaseSlab(slab);
    releaseSlab(chunk);
    const whileFrameHeld = takeSlab(SIZE);
    expect(whileFrameHeld.buffer).not.toBe(slab.buffer);
    expect(chunk.every((byte) => byte === 1)).toBe(true);

    releaseSlab(frame);
    const reused = takeSlab(SIZE);
    expect(reused.buffer).toBe(slab.buffer);
    expect(reused.every((byte) => byte === 0xee)).toBe(true);
    releaseSlab(reused);
    releaseSlab(whileFrameHeld);
  });

  it("keeps slabs of each size apart", () => {
    const small = takeSlab(SIZE);
    const large = takeSlab(2 * SIZE);
    releaseSlab(small);
    releaseSlab(large);
    const again = takeSlab(2 * SIZE);
    expect(again.length).toBe(2 * SIZE);
    expect(again.buffer).toBe(large.buffer);
    expect(takeSlab(SIZE).buffer).toBe(small.buffer);
  });

  it("frames a chunk of a framed slab (a PTY burst's) in place, with the longest processId, and anything else as a copy", () => {
    const data = takeFramedSlab(SIZE);
    data.fill(7);
    const chunk = withFrameRoom(data.subarray(0, 3000));
    const processId = Buffer.from("\u{10ffff}".repeat(256));
    const frame = encodeBinaryOutput(processId, 41, "pty", chunk);
    expect(frame.buffer).toBe(chunk.buffer);
    expect(frame.byteOffset + frame.length).toBe(chunk.byteOffset + chunk.length);
    expect(decodeBinaryOutputFrame(frame)).toMatchObject({ processId: processId.toString(), seq: 41, stream: "pty", data: chunk });
    // A chunk not marked has no room of its own in front: it is copied into a frame.
    const unmarked = data.subarray(0, 3000);
    expect(encodeBinaryOutput(processId, 1, "pty", unmarked).buffer).not.toBe(unmarked.buffer);
    releaseSlab(data);
  });

  it("ignores buffers that are not slabs", () => {
    const other = Buffer.alloc(SIZE);
    expect(retainSlab(other)).toBe(false);
    releaseSlab(other);
    expect(takeSlab(SIZE).buffer).not.toBe(other.buffer);
  });
});
