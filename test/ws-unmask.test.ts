/**
 * The word-at-a-time unmask the daemon's bundle gives ws in place of the
 * `bufferutil` addon (server/src/transport/ws-unmask.ts): byte for byte what
 * RFC 6455's XOR gives, at every alignment and length around a word.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { mask, unmask } from "../server/dist/transport/ws-unmask.js";

const reference = (data: Uint8Array, key: Uint8Array) => Uint8Array.from(data, (byte, index) => byte ^ key[index & 3]!);

describe("ws-unmask", () => {
  it("unmasks in place exactly as the byte-wise XOR, whatever the buffer's alignment and length", () => {
    const key = randomBytes(4);
    for (let offset = 0; offset < 8; offset++) {
      for (const length of [0, 1, 3, 4, 5, 7, 8, 31, 32, 33, 64, 1000, 4099]) {
        const memory = randomBytes(offset + length + 8);
        const view = memory.subarray(offset, offset + length);
        const expected = reference(view, key);
        const after = Buffer.from(memory.subarray(offset + length));
        unmask(view, key);
        expect(Buffer.from(view).equals(Buffer.from(expected))).toBe(true);
        // Nothing past the payload is touched.
        expect(memory.subarray(offset + length).equals(after)).toBe(true);
      }
    }
  });

  it("masks into an output at an offset", () => {
    const key = randomBytes(4);
    const source = randomBytes(70);
    const output = Buffer.alloc(80);
    mask(source, key, output, 5, 70);
    expect(output.subarray(5, 75).equals(Buffer.from(reference(source, key)))).toBe(true);
    expect(output.subarray(0, 5).equals(Buffer.alloc(5))).toBe(true);
  });

  it("is what the bundled daemon's ws uses (the addon's name resolves to it)", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const chunks = new URL("../server/dist/chunks/", import.meta.url);
    const bundled = readdirSync(chunks).map((name) => readFileSync(new URL(name, chunks), "utf8"));
    expect(bundled.some((text) => text.includes('"maskWord"'))).toBe(true);
    expect(bundled.some((text) => /require\(["']bufferutil["']\)/.test(text))).toBe(false);
  });
});
