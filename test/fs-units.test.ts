/**
 * The fs family's pure parts: the strict base64 decoder (its refusals are
 * the ones codex 0.169.0 gives, frame for frame), UTF-8 name order, the
 * smallest-names window, the daemon-wide read budget and the per-connection
 * large-reply lane.
 */
import { describe, expect, it } from "vitest";
import { decodeStandardBase64 } from "../server/dist/methods/fs/base64.js";
import { SmallestNames, compareByUtf8 } from "../server/dist/methods/fs/name-order.js";
import { ByteBudget } from "../server/dist/methods/fs/read-budget.js";
import { withReplyLane } from "../server/dist/methods/fs/reply-lane.js";
import { ConnectionResources } from "../server/dist/rpc/connection-resources.js";
import type { SessionContext } from "../server/dist/methods/context.js";

describe("strict standard base64", () => {
  it("decodes canonical input, including empty", () => {
    expect(decodeStandardBase64("")).toEqual({ bytes: Buffer.alloc(0) });
    expect(decodeStandardBase64("aGk=")).toEqual({ bytes: Buffer.from("hi") });
    expect(decodeStandardBase64("QUFB")).toEqual({ bytes: Buffer.from("AAA") });
    const random = Buffer.from(Array.from({ length: 1000 }, (_, index) => (index * 37) % 256));
    expect(decodeStandardBase64(random.toString("base64"))).toEqual({ bytes: random });
  });

  it("refuses what upstream's base64 crate refuses, in its words", () => {
    // Each answer is what codex 0.169.0 said to fs/writeFile with that dataBase64.
    const refusals: [string, string][] = [
      ["a", "Invalid input length: 1"],
      ["aGk", "Invalid padding"],
      ["a$", "Invalid symbol 36, offset 1."],
      ["aG=k", "Invalid symbol 61, offset 2."],
      ["AB==", "Invalid last symbol 66, offset 1."],
      ["ABC=", "Invalid last symbol 67, offset 2."],
      ["ABCD=", "Invalid symbol 61, offset 4."],
      ["=", "Invalid symbol 61, offset 0."],
      ["A=", "Invalid symbol 61, offset 1."],
      ["AAAA====", "Invalid symbol 61, offset 4."],
      ["AA==AA==", "Invalid symbol 61, offset 2."],
      ["é", "Invalid symbol 195, offset 0."],
      ["AAA\n", "Invalid symbol 10, offset 3."],
      ["AAAAA", "Invalid input length: 5"],
      ["AAAAAA", "Invalid padding"],
      ["AAéA", "Invalid symbol 195, offset 2."],
      ["AAAA AAA", "Invalid symbol 32, offset 4."],
      ["AAAAAA=A", "Invalid symbol 61, offset 6."],
      ["AAA=AAAA", "Invalid symbol 61, offset 3."],
    ];
    for (const [input, error] of refusals) expect(decodeStandardBase64(input), JSON.stringify(input)).toEqual({ error });
  });
});

describe("name order", () => {
  it("sorts by UTF-8 bytes, as Rust sorts Strings", () => {
    // U+1F600 (an emoji, surrogates in UTF-16) sorts after U+FF5E in UTF-8, before it in UTF-16.
    const names = ["b", "\u{1F600}", "\uFF5E", "a", "ab", "B", "é"];
    expect([...names].sort(compareByUtf8)).toEqual(["B", "a", "ab", "b", "é", "\uFF5E", "\u{1F600}"]);
    expect(Buffer.compare(Buffer.from("\uFF5E"), Buffer.from("\u{1F600}"))).toBe(-1);
  });

  it("keeps the smallest names of a long stream in a bounded window", () => {
    const window = new SmallestNames(3);
    for (let index = 1000; index > 0; index--) window.add(`n${String(index).padStart(4, "0")}`);
    expect(window.sorted()).toEqual(["n0001", "n0002", "n0003"]);
  });
});

describe("the whole-file read budget", () => {
  it("grants in arrival order and lets a waiter whose connection closed leave", async () => {
    const budget = new ByteBudget(100);
    const open = new AbortController().signal;
    const releaseFirst = await budget.reserve(60, open);
    const granted: string[] = [];
    const leaving = new AbortController();
    const large = budget.reserve(80, leaving.signal).then(
      () => granted.push("large"),
      () => granted.push("large left"),
    );
    // Would fit now, but waits behind the earlier, larger request.
    const small = budget.reserve(30, open).then((release) => {
      granted.push("small");
      return release;
    });
    await Promise.resolve();
    expect(granted).toEqual([]);
    leaving.abort();
    const releaseSmall = await small;
    await large;
    expect(granted.sort()).toEqual(["large left", "small"]);
    releaseFirst();
    releaseSmall();
    // Everything is back: the whole budget can be taken at once.
    const releaseAll = await budget.reserve(100, open);
    releaseAll();
  });
});

describe("the large-reply lane", () => {
  it("runs one producer at a time, each only once the connection is writable", async () => {
    let writable!: () => void;
    let waits = 0;
    const closing = new AbortController();
    const context = {
      resources: new ConnectionResources(),
      signal: closing.signal,
      whenWritable: () => {
        waits++;
        return new Promise<void>((resolve) => (writable = resolve));
      },
    } as unknown as SessionContext;
    const ran: string[] = [];
    const first = withReplyLane(context, async () => ran.push("first"));
    const second = withReplyLane(context, async () => ran.push("second"));
    await new Promise((resolve) => setImmediate(resolve));
    expect({ ran, waits }).toEqual({ ran: [], waits: 1 });
    writable();
    await first;
    expect(ran).toEqual(["first"]);
    // The second waits for its own turn at a writable connection.
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits).toBe(2);
    expect(ran).toEqual(["first"]);
    closing.abort();
    writable();
    await expect(second).rejects.toMatchObject({ message: "the connection closed" });
    expect(ran).toEqual(["first"]);
  });
});
