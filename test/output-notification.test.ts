/**
 * process/output in JSON is built as UTF-8 bytes, not as a string
 * (rpc/envelope.ts): it must still be one text message holding exactly the
 * JSON a string would, whatever the processId and the output bytes are, on
 * a WebSocket and on stdio.
 */
import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { encodeOutputNotification } from "../server/dist/rpc/envelope.js";
import { releaseSlab, retainSlab } from "../server/dist/process/slab-pool.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { StdioPeer } from "./helpers/stdio-peer.js";
import { WireClient } from "./helpers/wire-client.js";

/** Characters of one, two, three and four UTF-8 bytes, and one JSON must escape. */
const processId = 'out-é-✓-😀-"q"';
const everyByte = Buffer.from(Array.from({ length: 256 }, (_, byte) => byte));

const start = (tty = false) => ({
  processId,
  // Every byte value from 0 to 255 (octal escapes: printf in sh takes no \x).
  argv: ["/bin/sh", "-c", `printf '${[...everyByte].map((byte) => `\\${byte.toString(8).padStart(3, "0")}`).join("")}'`],
  cwd: "/",
  env: { PATH: "/usr/bin:/bin" },
  tty,
});

describe("process/output as JSON", () => {
  it("encodes the same message a string would, with or without jsonrpc", () => {
    for (const jsonrpc of [false, true]) {
      const frame = encodeOutputNotification(JSON.stringify(processId), 7, "stdout", everyByte.subarray(3, 250), jsonrpc);
      const text = frame.bytes.toString("utf8");
      expect(frame.length).toBe(Buffer.byteLength(text));
      expect(JSON.parse(text)).toEqual({
        ...(jsonrpc ? { jsonrpc: "2.0" } : {}),
        method: "process/output",
        params: { processId, seq: 7, stream: "stdout", chunk: everyByte.subarray(3, 250).toString("base64") },
      });
    }
  });

  it("encodes large chunks a piece at a time into pooled frames that join up to the whole chunk's base64", () => {
    // Around the pooling threshold (8 KiB) and the base64 pieces (12 KiB), up to the largest JSON chunk (64 KiB) and
    // past it (a frame of its own); each size twice, longest first the second time, so a shorter frame is built in a
    // pooled buffer a longer one filled before it. The longest processId, of characters JSON escapes as six bytes.
    const sizes = [8191, 8192, 12 * 1024, 12 * 1024 + 1, 12 * 1024 + 2, 50_001, 64 * 1024, 66 * 1024];
    for (const id of [processId, "\u0001".repeat(256)]) {
      for (const size of [...sizes, ...[...sizes].reverse()]) {
        const data = randomBytes(size);
        const frame = encodeOutputNotification(JSON.stringify(id), 1, "pty", data, true);
        const message = JSON.parse(frame.bytes.toString("utf8"));
        expect(message.params).toEqual({ processId: id, seq: 1, stream: "pty", chunk: data.toString("base64") });
        // A pooled frame is a slab the caller holds once; a small or oversized one is a buffer of its own.
        const pooled = retainSlab(frame.bytes);
        expect(pooled).toBe(size >= 8192 && size <= 64 * 1024);
        if (pooled) {
          releaseSlab(frame.bytes);
          releaseSlab(frame.bytes);
        }
      }
    }
  });

  it("arrives on a WebSocket as text frames with the processId and every byte intact", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await client.call("process/start", start());
    await client.closedOf(processId);
    expect(client.binaryFrames).toEqual([]);
    const chunks = client.notifications(processId).filter((message) => message.method === "process/output");
    expect(Buffer.concat(chunks.map((message) => Buffer.from(String(message.params?.chunk), "base64")))).toEqual(everyByte);
  });

  it("arrives on stdio as one line per message with the processId and every byte intact", async () => {
    const peer = StdioPeer.execmux();
    await peer.ready();
    await peer.call("process/start", start());
    await peer.next((message) => message.method === "process/closed" && message.params?.processId === processId);
    const chunks = peer.messages.filter((message) => message.method === "process/output" && message.params?.processId === processId);
    expect(Buffer.concat(chunks.map((message) => Buffer.from(String(message.params?.chunk), "base64")))).toEqual(everyByte);
    expect(peer.lines.length).toBe(peer.messages.length);
  });
});
