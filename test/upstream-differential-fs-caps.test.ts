/**
 * Differential conformance (test/helpers/differential.ts) for the methods
 * behind the capabilities upstream 0.171 reports and execmux now serves too:
 * fs/watchMissing (fsWatchMissing). What upstream does was asked of the
 * binary first; docs/upstream-capabilities.md has it method by method.
 *   npx vitest run test/upstream-differential-fs-caps.test.ts -t "fs/watchMissing"
 */
import { tmpdir } from "node:os";
import { describeDifferential } from "./helpers/differential.js";
import { fs, uri } from "./helpers/exec-server-frames.js";

const watchMissing = (watchId: unknown, missing: string[], present?: string | null) =>
  fs("watchMissing", { watchId, missing: missing.map(uri), ...(present === undefined ? {} : { present: present === null ? null : uri(present) }) });
const fired = (watchId: number) => ({ notification: "fs/missingChanged", where: { watchId } });
const writeFile = (name: string, text = "x") => fs("writeFile", { path: uri(name), dataBase64: Buffer.from(text).toString("base64") });
/** A request both answer whatever the state: everything sent before it has been sent. */
const sync = { request: "environment/status" };
/** A chain of `count` directory names, to go under the scratch directory. */
const chain = (count: number) => Array.from({ length: count }, (_, index) => `d${index}`).join("/");
/** Directories a scratch directory lies below / (test/helpers/scratch.ts makes it in the temporary directory). */
const SCRATCH_DEPTH = tmpdir().split("/").filter(Boolean).length + 1;

describeDifferential("fs/watchMissing", [
  {
    name: "the paths a Codex agent watches; a missing file appears",
    files: { project: { directory: true } },
    steps: [
      watchMissing(1, ["project/.agents/skills", "project/.git", ".git"], null),
      writeFile(".git"),
      fired(1),
    ],
  },
  {
    name: "a directory above a missing path appears",
    steps: [watchMissing(1, ["b/c/d"]), fs("createDirectory", { path: uri("b"), recursive: false }), fired(1)],
  },
  {
    name: "a directory above a missing path is removed",
    files: { "x/y": { directory: true } },
    steps: [watchMissing(1, ["x/y/z"]), fs("remove", { path: uri("x") }), fired(1)],
  },
  {
    name: "an unrelated file, and one inside the present directory, fire nothing; the missing one does",
    files: { present: { directory: true } },
    steps: [watchMissing(1, ["a"], "present"), writeFile("other"), writeFile("present/inner"), sync, writeFile("a"), fired(1)],
  },
  {
    name: "the present file is written",
    files: { p: "before" },
    steps: [watchMissing(1, ["a"], "p"), writeFile("p", "after"), fired(1)],
  },
  {
    name: "the present file is removed",
    files: { p: "x" },
    steps: [watchMissing(1, ["a"], "p"), fs("remove", { path: uri("p") }), fired(1)],
  },
  {
    name: "a watch fires once",
    steps: [watchMissing(1, ["a", "b"]), writeFile("a"), fired(1), writeFile("b"), sync],
  },
  {
    name: "a larger watchId replaces the watch; a smaller or equal one is ignored",
    steps: [
      watchMissing(5, ["a"]),
      watchMissing(3, ["b"]),
      watchMissing(5, ["b"]),
      writeFile("b"),
      sync,
      writeFile("a"),
      fired(5),
      watchMissing(6, ["c"]),
      watchMissing(7, []),
      writeFile("c"),
      sync,
    ],
  },
  {
    name: "watchId 0 is not larger than none",
    steps: [watchMissing(0, ["a"]), writeFile("a"), sync],
  },
  {
    name: "nothing to watch: no missing path, or one that exists (a dangling symlink does)",
    files: { here: "x", dangling: { symlink: "<scratch>/nowhere" } },
    steps: [watchMissing(1, []), watchMissing(2, ["a", "here"]), watchMissing(3, ["dangling"]), watchMissing(4, ["here/child"])],
  },
  {
    name: "present absent, or a symlink",
    files: { file: "x", link: { symlink: "<scratch>/file" } },
    steps: [watchMissing(1, ["a"], "absent"), watchMissing(2, ["a"], "link"), watchMissing(3, ["a"], "file")],
  },
  {
    name: "a directory above a path that is a symlink or a file",
    files: { file: "x", "real/dir": { directory: true }, link: { symlink: "<scratch>/real" } },
    steps: [watchMissing(1, ["link/dir/a"]), watchMissing(2, ["file/a/b"]), watchMissing(3, ["real/dir/a"])],
  },
  {
    name: "64 paths, not 65",
    steps: [
      watchMissing(1, Array.from({ length: 64 }, (_, index) => `m${index}`)),
      watchMissing(2, Array.from({ length: 65 }, (_, index) => `m${index}`)),
      watchMissing(3, Array.from({ length: 65 }, () => "m0")),
    ],
  },
  {
    name: "64 directories above the paths, not 65",
    // Counted from /, whether they exist or not: a chain under the scratch directory up to the limit, and one more.
    steps: [watchMissing(1, [`${chain(63 - SCRATCH_DEPTH)}/x`]), watchMissing(2, [`${chain(64 - SCRATCH_DEPTH)}/x`])],
  },
  {
    name: "directories above several paths are counted once",
    steps: [
      watchMissing(1, Array.from({ length: 63 - SCRATCH_DEPTH }, (_, index) => `q${index}/x`)),
      watchMissing(2, Array.from({ length: 64 - SCRATCH_DEPTH }, (_, index) => `q${index}/x`)),
    ],
  },
  {
    name: "a name too long to exist",
    steps: [watchMissing(1, ["a".repeat(255)]), watchMissing(2, ["a".repeat(256)])],
  },
  {
    name: "a path of another host is not watched, and still replaces the watch",
    steps: [
      watchMissing(1, ["a"]),
      fs("watchMissing", { watchId: 2, missing: ["file:///C:/x"] }),
      writeFile("a"),
      sync,
    ],
  },
  {
    name: "params upstream refuses",
    steps: [
      { request: "fs/watchMissing", params: null },
      { request: "fs/watchMissing", params: {} },
      { request: "fs/watchMissing", params: { watchId: 1 } },
      { request: "fs/watchMissing", params: { watchId: "1", missing: [] } },
      { request: "fs/watchMissing", params: { watchId: -1, missing: [] } },
      { request: "fs/watchMissing", params: { watchId: 1.5, missing: [] } },
      { request: "fs/watchMissing", params: { watchId: 1, missing: "x" } },
      { request: "fs/watchMissing", params: { watchId: 1, missing: [5] } },
      { request: "fs/watchMissing", params: { watchId: 1, missing: [], present: [] } },
      { request: "fs/watchMissing", params: { watchId: 1, missing: ["http://x/y"] } },
      { request: "fs/watchMissing", params: { watchId: 1, missing: ["file:///tmp/a%00b"] } },
    ],
  },
]);
