/** Reuse of slabs (large JSON output frames, rpc/envelope.ts), as a pure unit: a slab comes back only once every hold on it is released. */
import { describe, expect, it } from "vitest";
import { poisonReturnedSlabs } from "@execmux/server";
import { releaseSlab, retainSlab, takeSlab } from "../server/dist/process/slab-pool.js";

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

  it("ignores buffers that are not slabs", () => {
    const other = Buffer.alloc(SIZE);
    expect(retainSlab(other)).toBe(false);
    releaseSlab(other);
    expect(takeSlab(SIZE).buffer).not.toBe(other.buffer);
  });
});
