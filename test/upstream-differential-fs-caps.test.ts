/**
 * Differential conformance (test/helpers/differential.ts) for the methods
 * behind the capabilities upstream 0.171 reports and execmux now serves too:
 * fs/watchMissing (fsWatchMissing). What upstream does was asked of the
 * binary first; docs/upstream-capabilities.md has it method by method.
 *   npx vitest run test/upstream-differential-fs-caps.test.ts -t "fs/watchMissing"
 *
 * Both servers inherit this process's environment (the upstream as a child,
 * execmux in this process), set below for the valueEnvVar cases.
 */
import { tmpdir } from "node:os";
import { expect } from "vitest";
import { describeDifferential, observationOf } from "./helpers/differential.js";
import { fs, http, uri, readsDisk } from "./helpers/exec-server-frames.js";
import { HttpTarget } from "./helpers/http-target.js";

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

const openFor = (handleId: string, name: string, mode?: unknown) => fs("open", { handleId, path: uri(name), ...(mode === undefined ? {} : { mode }) });
const writeBlock = (handleId: string, offset: number, text: string) => fs("writeBlock", { handleId, offset, chunk: Buffer.from(text).toString("base64") });
const close = (handleId: string) => fs("close", { handleId });

describeDifferential("fs/open mode replace, fs/writeBlock", [
  {
    name: "a new file, written in blocks at any offset (a gap is zeros)",
    snapshot: true,
    steps: [openFor("w", "new.txt", "replace"), writeBlock("w", 0, "hello"), writeBlock("w", 5, " world"), writeBlock("w", 0, "J"), writeBlock("w", 14, "!"), close("w")],
  },
  {
    name: "an existing file is truncated at open, in place",
    files: { "old.txt": "0123456789" },
    snapshot: true,
    steps: [openFor("w", "old.txt", "replace"), { request: "fs/readFile", params: { path: uri("old.txt") } }, writeBlock("w", 0, "new"), close("w")],
  },
  {
    name: "through a symlink, and through a dangling one",
    files: { target: "before", link: { symlink: "<scratch>/target" }, dangling: { symlink: "<scratch>/made" } },
    snapshot: true,
    steps: [openFor("a", "link", "replace"), writeBlock("a", 0, "via link"), openFor("b", "dangling", "replace"), writeBlock("b", 0, "made"), close("a"), close("b")],
  },
  {
    name: "the blocks stay written when the handle is never closed",
    snapshot: true,
    steps: [openFor("w", "kept.txt", "replace"), writeBlock("w", 0, "kept")],
  },
  {
    name: "a write handle cannot be read (and that closes it); a read handle cannot be written (and stays open)",
    files: { "r.txt": "readable" },
    steps: [
      openFor("w", "w.txt", "replace"),
      fs("readBlock", { handleId: "w", offset: 0, len: 1 }),
      writeBlock("w", 0, "x"),
      openFor("r", "r.txt", "read"),
      writeBlock("r", 0, "x"),
      fs("readBlock", { handleId: "r", offset: 0, len: 8 }),
    ],
  },
  {
    name: "block length: empty, 1 MiB, 1 MiB and one byte",
    steps: [
      openFor("w", "big", "replace"),
      fs("writeBlock", { handleId: "w", offset: 0, chunk: "" }),
      fs("writeBlock", { handleId: "w", offset: 0, chunk: Buffer.alloc(1_048_576, 97).toString("base64") }),
      fs("writeBlock", { handleId: "w", offset: 0, chunk: Buffer.alloc(1_048_577, 97).toString("base64") }),
      { request: "fs/readFile", params: { path: uri("big") } },
    ],
  },
  {
    name: "checks in upstream's order: handle id, block length, handle",
    steps: [
      fs("writeBlock", { handleId: "h".repeat(33), offset: 0, chunk: "" }),
      fs("writeBlock", { handleId: "nope", offset: 0, chunk: "" }),
      fs("writeBlock", { handleId: "nope", offset: 0, chunk: "eA==" }),
    ],
  },
  {
    name: "chunks that are not base64",
    steps: [
      openFor("w", "f", "replace"),
      fs("writeBlock", { handleId: "w", offset: 0, chunk: "!!" }),
      fs("writeBlock", { handleId: "w", offset: 0, chunk: "eA" }),
      fs("writeBlock", { handleId: "w", offset: 0, chunk: "eA=" }),
      writeBlock("w", 0, "still open"),
    ],
  },
  {
    name: "what cannot be opened for replace: a directory, a FIFO, a device, a missing parent",
    files: { dir: { directory: true }, fifo: { fifo: true } },
    steps: [openFor("a", "dir", "replace"), openFor("b", "fifo", "replace"), fs("open", { handleId: "c", path: "file:///dev/null", mode: "replace" }), openFor("d", "missing/x", "replace")],
  },
  {
    name: "modes: absent is read; null, a number, an unknown name or a map are refused",
    files: { f: "x" },
    steps: [
      openFor("a", "f"),
      openFor("b", "f", null),
      openFor("c", "f", 5),
      openFor("d", "f", "write"),
      openFor("e", "f", { replace: {} }),
      openFor("f", "f", { append: null }),
      openFor("g", "f", ["read"]),
    ],
  },
  {
    name: "read and write handles share the 128 a connection may hold",
    files: { f: "x" },
    steps: [
      ...Array.from({ length: 64 }, (_, index) => openFor(`r${index}`, "f", "read")),
      ...Array.from({ length: 64 }, (_, index) => openFor(`w${index}`, `w${index}`, "replace")),
      openFor("one-too-many", "f", "replace"),
    ],
  },
  {
    name: "params upstream refuses",
    steps: [
      { request: "fs/writeBlock", params: null },
      { request: "fs/writeBlock", params: { handleId: "w" } },
      { request: "fs/writeBlock", params: { handleId: "w", offset: 0 } },
      { request: "fs/writeBlock", params: { handleId: "w", offset: -1, chunk: "eA==" } },
      { request: "fs/writeBlock", params: { handleId: "w", offset: "0", chunk: "eA==" } },
      { request: "fs/writeBlock", params: { handleId: 5, offset: 0, chunk: "eA==" } },
    ],
  },
]);

// Both executors read these: the upstream's environment is a copy of this process's, execmux runs in it.
process.env["FS_CAPS_HEADER_TOKEN"] = "t0ken";
process.env["FS_CAPS_EMPTY"] = "";
process.env["FS_CAPS_NEWLINE"] = "two\nlines";
process.env["OPENAI_API_KEY"] = "sk-must-not-leave";
process.env["EXECMUX_FS_CAPS_SETTING"] = "daemon-only";

const echoWith = (requestId: string, headers: unknown[]) => http(requestId, "/echo", { headers });

describeDifferential(
  "http/request valueEnvVar",
  [
    {
      name: "the variable's value is appended to value",
      steps: [
        echoWith("r", [
          { name: "x-auth", value: "Bearer ", valueEnvVar: "FS_CAPS_HEADER_TOKEN" },
          // Repeats kept together: upstream's reqwest groups a name's values (see docs/upstream-capabilities.md).
          { name: "x-auth", value: "again ", valueEnvVar: "FS_CAPS_HEADER_TOKEN" },
          { name: "x-bare", value: "", valueEnvVar: "FS_CAPS_HEADER_TOKEN" },
          { name: "x-plain", value: "as is", valueEnvVar: null },
        ]),
      ],
    },
    { name: "a variable that is not set", steps: [echoWith("r", [{ name: "x-a", value: "", valueEnvVar: "FS_CAPS_NOT_SET" }])] },
    { name: "a variable that is empty", steps: [echoWith("r", [{ name: "x-a", value: "p", valueEnvVar: "FS_CAPS_EMPTY" }])] },
    { name: "names are looked up as written", steps: [echoWith("r", [{ name: "x-a", value: "", valueEnvVar: "fs_caps_header_token" }])] },
    { name: "an empty name, and one with =", steps: [echoWith("r", [{ name: "x-a", value: "", valueEnvVar: "" }]), echoWith("s", [{ name: "x-a", value: "", valueEnvVar: "A=B" }])] },
    { name: "a value that becomes invalid with the variable", steps: [echoWith("r", [{ name: "x-a", value: "", valueEnvVar: "FS_CAPS_NEWLINE" }])] },
    {
      name: "Codex's own credentials are never readable, in any case",
      steps: [echoWith("r", [{ name: "x-a", value: "", valueEnvVar: "OPENAI_API_KEY" }]), echoWith("s", [{ name: "x-a", value: "", valueEnvVar: "openai_api_key" }])],
    },
    { name: "refused whether set or not", steps: [echoWith("r", [{ name: "x-a", value: "", valueEnvVar: "AWS_SESSION_TOKEN" }])] },
    {
      name: "checks in upstream's order: each header's name, then its variable, then its value",
      steps: [
        echoWith("r", [{ name: "bad name", value: "", valueEnvVar: "FS_CAPS_NOT_SET" }]),
        echoWith("s", [{ name: "x-a", value: "a\nb", valueEnvVar: "FS_CAPS_NOT_SET" }]),
        echoWith("t", [{ name: "x-a", value: "", valueEnvVar: "FS_CAPS_NOT_SET" }, { name: "bad name", value: "" }]),
        { request: "http/request", params: { method: "GET", url: "ftp://127.0.0.1/x", requestId: "u", headers: [{ name: "x", value: "", valueEnvVar: "FS_CAPS_NOT_SET" }] } },
      ],
    },
    { name: "valueEnvVar that is not a string", steps: [echoWith("r", [{ name: "x-a", value: "", valueEnvVar: 5 }])] },
    { name: "valueEnvVar without value", steps: [echoWith("r", [{ name: "x-a", valueEnvVar: "FS_CAPS_HEADER_TOKEN" }])] },
    {
      name: "the daemon's own settings",
      steps: [echoWith("r", [{ name: "x-a", value: "", valueEnvVar: "EXECMUX_FS_CAPS_SETTING" }])],
      differs: {
        why: "execmux keeps its own EXECMUX_* settings (its token among them) from every client; upstream does not know them and sends the value",
        assert: (upstream, execmux) => {
          expect(JSON.stringify(observationOf(upstream, "a: http/request #2"))).toContain("daemon-only");
          expect(observationOf(execmux, "a: http/request #2")).toEqual({
            id: 2,
            error: { code: -32602, message: "http/request header x-a cannot use executor environment variable EXECMUX_FS_CAPS_SETTING" },
          });
        },
      },
    },
  ],
  { httpTarget: new HttpTarget() },
);

/**
 * A profile that reads all but one directory and writes only `proj`: not
 * whole-disk read, so both servers run reads (walks, streamed opens) inside
 * a sandbox (capability sandboxedFileStreaming), and a denied path is the
 * kernel's EACCES in the same words.
 */
const SECRET_DENIED = { path: { type: "path", path: "file://<scratch>/secret" }, access: "deny" };
const denySecretSandbox = {
  permissions: readsDisk({ path: { type: "path", path: "file://<scratch>/proj" }, access: "write" }, SECRET_DENIED),
  policyContext: { cwd: "file://<scratch>/proj", workspaceRoots: ["file://<scratch>/proj"] },
  windowsSandboxLevel: "disabled",
  useLegacyLandlock: false,
};
/**
 * The same without the writable root: under one, upstream's sandbox shows
 * .git, .codex, .agents and .aws below it as (read-only) directories even
 * when they do not exist, which execmux's does not (sandbox/, the lead's).
 */
const readOnlyDenySecretSandbox = {
  ...denySecretSandbox,
  permissions: readsDisk(SECRET_DENIED),
};
const CONFINED_TREE = {
  "proj/a.txt": "0123456789",
  "proj/sub/b.txt": "b",
  "proj/planted": { symlink: "<scratch>/outside" },
  "secret/s.txt": "secret",
  "outside/o.txt": "o",
} as const;
const confined = (method: string, params: Record<string, unknown>) => fs(method, { ...params, sandbox: denySecretSandbox });
const confinedRead = (method: string, params: Record<string, unknown>) => fs(method, { ...params, sandbox: readOnlyDenySecretSandbox });
const WALK_OPTIONS = { maxDepth: 5, maxDirectories: 100, maxEntries: 100, followDirectorySymlinks: false };

describeDifferential("fs/walk and fs/open under a sandbox that does not read the whole disk", [
  { name: "a walk sees what the profile lets it see", files: CONFINED_TREE, steps: [confinedRead("walk", { path: uri(""), options: WALK_OPTIONS })] },
  { name: "a walk of the denied directory", files: CONFINED_TREE, steps: [confinedRead("walk", { path: uri("secret"), options: WALK_OPTIONS })] },
  { name: "a walk of a missing root", files: CONFINED_TREE, steps: [confinedRead("walk", { path: uri("missing"), options: WALK_OPTIONS })] },
  {
    name: "a streamed read of a readable file, which reads the file as it is now",
    files: CONFINED_TREE,
    steps: [
      confined("open", { handleId: "r", path: uri("proj/a.txt") }),
      fs("readBlock", { handleId: "r", offset: 2, len: 4 }),
      fs("writeFile", { path: uri("proj/a.txt"), dataBase64: Buffer.from("XYZ").toString("base64") }),
      fs("readBlock", { handleId: "r", offset: 0, len: 10 }),
      fs("close", { handleId: "r" }),
    ],
  },
  {
    name: "a streamed read of a denied, a missing and a directory path",
    files: CONFINED_TREE,
    steps: [
      confined("open", { handleId: "a", path: uri("secret/s.txt") }),
      confined("open", { handleId: "b", path: uri("proj/missing") }),
      confined("open", { handleId: "c", path: uri("proj/sub") }),
    ],
  },
  {
    name: "a streamed write inside the writable root",
    files: CONFINED_TREE,
    snapshot: true,
    steps: [
      confined("open", { handleId: "w", path: uri("proj/new.txt"), mode: "replace" }),
      writeBlock("w", 0, "written inside"),
      confined("open", { handleId: "v", path: uri("proj/a.txt"), mode: "replace" }),
      writeBlock("v", 0, "replaced"),
      close("w"),
      close("v"),
    ],
  },
  {
    name: "a streamed write into the denied directory",
    files: CONFINED_TREE,
    snapshot: true,
    steps: [confined("open", { handleId: "w", path: uri("secret/new.txt"), mode: "replace" }), confined("open", { handleId: "v", path: uri("secret/s.txt"), mode: "replace" })],
  },
  {
    name: "a streamed write outside the writable root, and through a symlink planted in it",
    files: CONFINED_TREE,
    snapshot: true,
    steps: [
      confined("open", { handleId: "w", path: uri("outside/new.txt"), mode: "replace" }),
      confined("open", { handleId: "v", path: uri("outside/o.txt"), mode: "replace" }),
      confined("open", { handleId: "u", path: uri("proj/planted/o.txt"), mode: "replace" }),
      confined("open", { handleId: "r", path: uri("proj/planted/o.txt") }),
      fs("readBlock", { handleId: "r", offset: 0, len: 10 }),
    ],
  },
]);
