/**
 * capabilityRoots/discoverV1's own bounds (what upstream's differential
 * cases cannot show: execmux's limits across roots), and its Rust wording
 * for text that is not UTF-8. Real files in a scratch directory, a real
 * daemon where the budget is the daemon's.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCode, pathToFileUri } from "@execmux/shared";
import { discoverRoots, MAX_ENTRIES_PER_ROOT, type RootToDiscover } from "../server/src/methods/capabilities/root-discovery.js";
import { utf8Error } from "../server/src/methods/capabilities/utf8-error.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

const skill = (name: string) => `---\nname: ${name}\ndescription: ${name}\n---\n${"x".repeat(100)}\n`;

function tree(files: Record<string, string>): string {
  const root = scratchDirectory("discovery-bounds");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, ".."), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

const rootOf = (id: string, path: string): RootToDiscover => ({ id, uri: pathToFileUri(path), path });
const NO_LIMITS = { maxBytes: Number.MAX_SAFE_INTEGER, maxEntries: Number.MAX_SAFE_INTEGER, deadline: Number.MAX_SAFE_INTEGER };

describe("a discovery request's bounds across roots", () => {
  it("leaves files out past the request's bytes, with a warning, and says what it used", async () => {
    const path = tree({ "a/SKILL.md": skill("a"), "b/SKILL.md": skill("b"), "c/SKILL.md": skill("c") });
    const oneSkill = Buffer.byteLength(skill("a"));
    const outcome = await discoverRoots([rootOf("first", join(path, "a")), rootOf("rest", path)], { ...NO_LIMITS, maxBytes: 2 * oneSkill });

    expect(outcome.roots.map((root) => root.skills.map((found) => found.instructions.path.split("/").at(-2)))).toEqual([["a"], ["a"]]);
    expect(outcome.roots[1]!.warnings).toEqual([
      `capability discovery request exceeds execmux's ${2 * oneSkill}-byte limit`,
      `capability discovery request exceeds execmux's ${2 * oneSkill}-byte limit`,
    ]);
    expect(outcome.bytes).toBe(2 * oneSkill);
  });

  it("walks no further than the request's entries, and says the scan was cut short", async () => {
    const path = tree({ "one/SKILL.md": skill("one"), "two/SKILL.md": skill("two") });
    const outcome = await discoverRoots([rootOf("a", path), rootOf("b", path), rootOf("c", path)], { ...NO_LIMITS, maxEntries: 6 });

    // 4 entries each (two directories, two files): the second root gets the 2 left, the third none.
    expect(outcome.entries).toBe(6);
    expect(outcome.roots[0]!.skills).toHaveLength(2);
    expect(outcome.roots[0]!.warnings).toEqual([]);
    for (const cut of outcome.roots.slice(1)) expect(cut.warnings).toContain(`capability scan reached its traversal limit (root: ${pathToFileUri(path)})`);
    expect(outcome.roots[2]!.skills).toEqual([]);
  });

  it("starts no root past the deadline", async () => {
    const path = tree({ "s/SKILL.md": skill("s") });
    const outcome = await discoverRoots([rootOf("late", path)], { ...NO_LIMITS, deadline: Date.now() - 1 });
    expect(outcome.roots[0]).toMatchObject({ id: "late", skills: [], error: expect.stringContaining("time limit") });
  });

  it("keeps upstream's entry bound per root when the request allows more", async () => {
    const files = Object.fromEntries(Array.from({ length: MAX_ENTRIES_PER_ROOT + 1 }, (_, index) => [`f${index}`, ""]));
    const path = tree(files);
    const outcome = await discoverRoots([rootOf("big", path)], NO_LIMITS);
    expect(outcome.entries).toBe(MAX_ENTRIES_PER_ROOT);
    expect(outcome.roots[0]!.warnings).toEqual([`capability scan reached its traversal limit (root: ${pathToFileUri(path)})`]);
  }, 60_000);
});

describe("text that is not UTF-8, in Rust's words", () => {
  it.each([
    [[0x41, 0x80], "invalid utf-8 sequence of 1 bytes from index 1"],
    [[0xc3], "incomplete utf-8 byte sequence from index 0"],
    [[0xe2, 0x28, 0xa1], "invalid utf-8 sequence of 1 bytes from index 0"],
    [[0xe2, 0x82, 0x28], "invalid utf-8 sequence of 2 bytes from index 0"],
    [[0xf0, 0x9f, 0x98, 0x41], "invalid utf-8 sequence of 3 bytes from index 0"],
    [[0xf0, 0x9f, 0x98], "incomplete utf-8 byte sequence from index 0"],
    [[0xed, 0xa0, 0x80], "invalid utf-8 sequence of 1 bytes from index 0"],
    [[0xc0, 0x80], "invalid utf-8 sequence of 1 bytes from index 0"],
    [[0xf5, 0x80, 0x80, 0x80], "invalid utf-8 sequence of 1 bytes from index 0"],
  ])("%j", (bytes, expected) => {
    expect(utf8Error(Uint8Array.from(bytes))).toBe(expected);
  });

  it("accepts what is UTF-8", () => {
    expect(utf8Error(Buffer.from("plain, \u00e9, \u4e2d, \ud83d\ude00"))).toBeUndefined();
  });
});

describe("capabilityRoots/discoverV1 on a daemon", () => {
  it("is refused past the client's descriptors, and a connection's failure leaves the daemon serving", async () => {
    // One descriptor per client: the connection holds it, so a discovery cannot have one.
    const daemon = await startTestDaemon({ maxDescriptorsPerClient: 1 });
    const client = await WireClient.ready(daemon.url);
    const path = tree({ "s/SKILL.md": skill("s") });
    const refused = await client.request("capabilityRoots/discoverV1", { roots: [{ id: "r", path: pathToFileUri(path) }] });
    expect(refused.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "maxDescriptorsPerClient" } });
    expect(refused.error?.message).toContain("a capability discovery needs one more");
    client.close();

    const roomy = await startTestDaemon();
    const other = await WireClient.ready(roomy.url);
    const answered = await other.request("capabilityRoots/discoverV1", { roots: [{ id: "r", path: pathToFileUri(path) }] });
    expect(answered.result).toMatchObject({ roots: [{ id: "r", skills: [{ instructions: { contents: skill("s") } }], error: null }] });
    other.close();
  });
});
