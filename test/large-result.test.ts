/**
 * A reply with a large base64 member is built as bytes (rpc/envelope.ts
 * spliceLargeBase64), not through JSON.stringify: it must still be exactly
 * the JSON a string would be, whatever else the result holds and whatever
 * the request id is.
 */
import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { encodeResult } from "../server/dist/rpc/envelope.js";
import { Utf8Text } from "../server/dist/rpc/transport.js";

const text = (reply: string | Utf8Text) => (reply instanceof Utf8Text ? reply.bytes.toString("utf8") : reply);

describe("a result with a large base64 member", () => {
  it("is the JSON a string would be, members in order, undefined ones left out", () => {
    const dataBase64 = randomBytes(200_000).toString("base64");
    const result = { before: 'é-✓-😀-"q"\n', dataBase64, skipped: undefined, eof: true, nested: { chunk: "x" } };
    for (const jsonrpc of [false, true]) {
      for (const id of [7, 'id-"é"']) {
        const reply = encodeResult(id, result, jsonrpc, true);
        expect(reply).toBeInstanceOf(Utf8Text);
        const expected = JSON.stringify({ ...(jsonrpc ? { jsonrpc: "2.0" } : {}), id, result });
        expect(text(reply)).toBe(expected);
      }
    }
  });

  it("finds them nested as process/read has them, and keeps arrays as JSON.stringify writes them", () => {
    const chunks = [1, 2, 3].map((seq) => ({ seq, stream: "stdout", chunk: randomBytes(60_000 + seq).toString("base64") }));
    const result = { chunks, small: [{ chunk: "QQ==" }, undefined, null, 7], nextSeq: 4, exited: false, extra: { deep: [[{ chunk: "x".repeat(70_000) }]] } };
    const reply = encodeResult(3, result, true, true);
    expect(reply).toBeInstanceOf(Utf8Text);
    expect(text(reply)).toBe(JSON.stringify({ jsonrpc: "2.0", id: 3, result }));
  });

  it("leaves small results and non-base64 members to JSON.stringify", () => {
    expect(encodeResult(1, { dataBase64: "QUJD" }, false, true)).toBe('{"id":1,"result":{"dataBase64":"QUJD"}}');
    const long = '"'.repeat(100_000);
    const reply = encodeResult(1, { text: long }, false, true);
    expect(typeof reply).toBe("string");
    expect(JSON.parse(text(reply)).result.text).toBe(long);
  });

  it("is not searched for in results of methods whose schema holds no base64", async () => {
    const { methods } = (await import("../server/dist/generated/methods.js" as string)) as typeof import("../server/src/generated/methods.js");
    expect(Object.entries(methods).filter(([, spec]) => spec.base64Result).map(([method]) => method).sort()).toEqual(["fs/readBlock", "fs/readFile", "http/request", "process/read"]);
    expect(typeof encodeResult(1, { dataBase64: "A".repeat(100_000) }, false, false)).toBe("string");
  });
});
