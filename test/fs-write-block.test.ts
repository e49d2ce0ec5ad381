/**
 * fs/writeBlock's bounds: a connection's blocks are written one at a time in
 * the order they came, and the bytes waiting are bounded (-32011 past it,
 * the connection and the daemon unharmed). What it answers otherwise is
 * compared with upstream in upstream-differential-fs-caps.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ErrorCode } from "@execmux/shared";
import { describe, expect, it, vi } from "vitest";
import { MAX_QUEUED_WRITE_BLOCK_BYTES, MAX_WRITE_BLOCK_BYTES } from "../server/src/methods/fs/limits.js";
import { WriteQueue } from "../server/src/methods/fs/write-block.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

describe("the write queue", () => {
  it("runs writes one after another, in order, and refuses past its bound until some are done", async () => {
    const queue = new WriteQueue(10);
    const order: string[] = [];
    let finishFirst: (() => void) | undefined;
    const first = queue.run(6, () => new Promise<void>((resolve) => (finishFirst = () => resolve(void order.push("first")))));
    const second = queue.run(4, async () => void order.push("second"));
    expect(() => queue.run(1, async () => undefined)).toThrow(expect.objectContaining({ code: ErrorCode.LimitExceeded, data: { limit: "queuedWriteBlockBytes" } }));
    expect(order).toEqual([]);
    await vi.waitFor(() => expect(finishFirst).toBeDefined());
    expect(order).toEqual([]);
    finishFirst!();
    await Promise.all([first, second]);
    expect(order).toEqual(["first", "second"]);
    await expect(queue.run(10, async () => "fits again")).resolves.toBe("fits again");
  });

  it("a failed write does not stop the ones after it", async () => {
    const queue = new WriteQueue(10);
    const failed = queue.run(1, async () => {
      throw new Error("disk said no");
    });
    await expect(failed).rejects.toThrow("disk said no");
    await expect(queue.run(1, async () => "next")).resolves.toBe("next");
  });
});

describe("fs/writeBlock against a daemon", () => {
  it("blocks sent without waiting are written in order or refused with -32011, and the connection goes on", async () => {
    const daemon = await startTestDaemon();
    const file = join(scratchDirectory("write-block"), "out");
    const client = await WireClient.ready(daemon.url);
    await client.call("fs/open", { handleId: "w", path: pathToFileURL(file).href, mode: "replace" });
    const blocks = Array.from({ length: 2 * (MAX_QUEUED_WRITE_BLOCK_BYTES / MAX_WRITE_BLOCK_BYTES) }, (_, index) => Buffer.alloc(MAX_WRITE_BLOCK_BYTES, 65 + index));
    const replies = await Promise.all(
      blocks.map((block, index) => client.request("fs/writeBlock", { handleId: "w", offset: index * MAX_WRITE_BLOCK_BYTES, chunk: block.toString("base64") })),
    );
    const written = replies.map((reply) => {
      if (reply.error) expect(reply.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "queuedWriteBlockBytes" } });
      else expect(reply.result).toEqual({});
      return !reply.error;
    });
    expect(written[0]).toBe(true);
    const content = readFileSync(file);
    blocks.forEach((block, index) => {
      const at = content.subarray(index * MAX_WRITE_BLOCK_BYTES, (index + 1) * MAX_WRITE_BLOCK_BYTES);
      if (written[index]) expect(at.equals(block), `block ${index}`).toBe(true);
    });
    expect(await client.call("fs/close", { handleId: "w" })).toEqual({});
    expect(await client.call("environment/status")).toEqual({ status: "ready" });
  });
});
