/**
 * The fs/* family against a real daemon: upstream's file_stream.rs and
 * file_system/shared.rs cases, its limits and exact messages (each checked
 * against codex 0.169.0, and a sample compared with it frame for frame at the
 * end), symlinks, FIFOs, percent-encoded paths and the sandbox gate.
 */
import { execFileSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ErrorCode, pathToFileUri } from "@execmux/shared";
import type { Daemon } from "@execmux/server";
import { startTestDaemon } from "./helpers/daemon.js";
import { metric } from "./helpers/http.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { startUpstreamExecServer } from "./helpers/upstream.js";
import { WireClient, b64, unb64, type WireMessage } from "./helpers/wire-client.js";

const uri = (path: string) => pathToFileUri(path);
const mkfifo = (path: string) => execFileSync("mkfifo", [path]);

async function connect(): Promise<{ daemon: Daemon; client: WireClient }> {
  const daemon = await startTestDaemon();
  return { daemon, client: await WireClient.ready(daemon.url) };
}

/** The error of a request that must fail. */
async function refusal(client: WireClient, method: string, params: unknown): Promise<{ code: number; message: string }> {
  const reply = await client.request(method, params);
  if (!reply.error) throw new Error(`${method} succeeded: ${JSON.stringify(reply.result)}`);
  return { code: reply.error.code, message: reply.error.message };
}

const NOT_FOUND = { code: ErrorCode.NotFound, message: "No such file or directory (os error 2)" };
const NOT_A_DIRECTORY = { code: ErrorCode.InternalError, message: "Not a directory (os error 20)" };

/** A restricted profile Codex sends in workspace-write mode (real-clients.md): full-disk read, no full-disk write. */
function workspaceWriteSandbox(root: string) {
  const special = (kind: string, subpath?: string) => ({ type: "special", value: subpath ? { kind, subpath } : { kind } });
  return {
    permissions: {
      type: "managed",
      file_system: {
        type: "restricted",
        entries: [
          { path: special("root"), access: "read" },
          { path: special("project_roots"), access: "write" },
          { path: special("slash_tmp"), access: "write" },
          { path: special("tmpdir"), access: "write" },
          { path: special("project_roots", ".git"), access: "read", missing_path_behavior: "skip" },
        ],
      },
      network: "restricted",
    },
    cwd: uri(root),
    workspaceRoots: [uri(root)],
    windowsSandboxLevel: "disabled",
    windowsSandboxProxySettingsMode: "reconcile",
    useLegacyLandlock: false,
  };
}

describe("handshake", () => {
  it("names the filesystem family before initialize and before initialized", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.connect(daemon.url);
    expect(await refusal(client, "fs/readFile", { path: "file:///etc/hostname" })).toEqual({
      code: ErrorCode.InvalidRequest,
      message: "client must call initialize before using filesystem methods",
    });
    await client.request("initialize", { clientName: "fs-test" });
    expect((await refusal(client, "fs/getMetadata", { path: "file:///" })).message).toBe(
      "client must send initialized before using filesystem methods",
    );
  });
});

describe("fs/readFile and fs/writeFile", () => {
  it("write bytes and read them back, through percent-encoded and native paths (file_system_write_file_writes_bytes, file_system_read_file_returns_bytes)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, index) => index % 256));
    const path = join(root, "space #1 100% ü.bin");
    const encoded = uri(path);
    expect(encoded).toContain("space%20%231%20100%25%20%C3%BC.bin");
    expect(await client.call("fs/writeFile", { path: encoded, dataBase64: bytes.toString("base64") })).toEqual({});
    expect(readFileSync(path)).toEqual(bytes);
    expect(await client.call("fs/readFile", { path: encoded })).toEqual({ dataBase64: bytes.toString("base64") });
    // A native absolute path is accepted too (a leniency), and `sandbox: null` runs directly.
    expect(await client.call("fs/readFile", { path, sandbox: null })).toEqual({ dataBase64: bytes.toString("base64") });
    // `file://localhost/` and a trailing slash name the same file.
    expect(await client.call("fs/readFile", { path: `file://localhost${encodeURI(path).replaceAll("#", "%23")}/` })).toEqual({
      dataBase64: bytes.toString("base64"),
    });
    await client.call("fs/writeFile", { path: encoded, dataBase64: "" });
    expect(statSync(path).size).toBe(0);
  });

  it("reports a missing file or parent as NotFound (file_system_write_file_reports_missing_parent)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    expect(await refusal(client, "fs/readFile", { path: uri(join(root, "missing")) })).toEqual(NOT_FOUND);
    expect(await refusal(client, "fs/writeFile", { path: uri(join(root, "no", "file")), dataBase64: b64("x") })).toEqual(NOT_FOUND);
  });

  it("refuses a directory and a FIFO without waiting for a writer (file_reads_reject_fifo_without_waiting_for_a_writer)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const fifo = join(root, "fifo");
    mkfifo(fifo);
    expect(await refusal(client, "fs/readFile", { path: uri(fifo) })).toEqual({
      code: ErrorCode.InvalidRequest,
      message: `path \`${fifo}\` is not a file`,
    });
    expect(await refusal(client, "fs/readFile", { path: uri(root) })).toEqual({
      code: ErrorCode.InvalidRequest,
      message: `path \`${root}\` is not a file`,
    });
    // Writing to a FIFO nobody reads fails at once instead of waiting.
    expect(await refusal(client, "fs/writeFile", { path: uri(fifo), dataBase64: b64("x") })).toEqual({
      code: ErrorCode.InternalError,
      message: "No such device or address (os error 6)",
    });
  });

  it("refuses invalid base64 with upstream's words, before touching the file", async () => {
    const { client } = await connect();
    const path = join(scratchDirectory("fs"), "file");
    writeFileSync(path, "kept");
    for (const [dataBase64, reason] of [
      ["aGk", "Invalid padding"],
      ["a", "Invalid input length: 1"],
      ["aG=k", "Invalid symbol 61, offset 2."],
      ["AB==", "Invalid last symbol 66, offset 1."],
    ]) {
      expect(await refusal(client, "fs/writeFile", { path: uri(path), dataBase64 })).toEqual({
        code: ErrorCode.InvalidRequest,
        message: `fs/writeFile requires valid base64 dataBase64: ${reason}`,
      });
    }
    expect(readFileSync(path, "utf8")).toBe("kept");
  });

  it("reads up to 12,000,000 bytes whole and refuses more, naming the limit", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const atLimit = join(root, "at-limit");
    const overLimit = join(root, "over-limit");
    writeFileSync(atLimit, "");
    truncateSync(atLimit, 12_000_000);
    writeFileSync(overLimit, "");
    truncateSync(overLimit, 12_000_001);
    const whole = await client.call<{ dataBase64: string }>("fs/readFile", { path: uri(atLimit) });
    expect(Buffer.from(whole.dataBase64, "base64").length).toBe(12_000_000);
    expect(await refusal(client, "fs/readFile", { path: uri(overLimit) })).toEqual({
      code: ErrorCode.InvalidRequest,
      message: "file is too large to read: limit is 12000000 bytes",
    });
  });

  it("reads a file past the size it reports (a /proc file reports 0)", async () => {
    const { client } = await connect();
    const reply = await client.call<{ dataBase64: string }>("fs/readFile", { path: "file:///proc/self/status" });
    expect(unb64(reply.dataBase64)).toMatch(/^Name:/);
  });

  it("with followSymlinks false, refuses symlinks anywhere in the path", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    mkdirSync(join(root, "dir"));
    writeFileSync(join(root, "dir", "file"), "data");
    symlinkSync("dir", join(root, "dirlink"));
    symlinkSync("dir/file", join(root, "filelink"));
    mkfifo(join(root, "fifo"));
    const noFollow = (path: string) => ({ path: uri(join(root, path)), followSymlinks: false });
    expect(await client.call("fs/readFile", noFollow("dir/file"))).toEqual({ dataBase64: b64("data") });
    expect(await refusal(client, "fs/readFile", noFollow("filelink"))).toEqual({
      code: ErrorCode.InternalError,
      message: "Symbolic link loop (os error 40)",
    });
    expect(await refusal(client, "fs/readFile", noFollow("dirlink/file"))).toEqual(NOT_A_DIRECTORY);
    expect(await refusal(client, "fs/readFile", noFollow("fifo"))).toEqual({
      code: ErrorCode.InvalidRequest,
      message: "path is not a regular file",
    });
    expect(await refusal(client, "fs/readFile", { path: "file:///", followSymlinks: false })).toEqual({
      code: ErrorCode.InvalidRequest,
      message: "path must name an entry",
    });
    // Writing through a symlink leaves its target alone; following it writes the target.
    expect(await refusal(client, "fs/writeFile", { ...noFollow("filelink"), dataBase64: b64("new") })).toEqual({
      code: ErrorCode.InternalError,
      message: "Symbolic link loop (os error 40)",
    });
    expect(await refusal(client, "fs/writeFile", { ...noFollow("dirlink/other"), dataBase64: b64("new") })).toEqual(NOT_A_DIRECTORY);
    expect(readFileSync(join(root, "dir", "file"), "utf8")).toBe("data");
    expect(existsSync(join(root, "dir", "other"))).toBe(false);
    await client.call("fs/writeFile", { path: uri(join(root, "filelink")), dataBase64: b64("new") });
    expect(readFileSync(join(root, "dir", "file"), "utf8")).toBe("new");
  });

  it("tells unparsable URIs (-32602) from paths of another host (-32600)", async () => {
    const { client } = await connect();
    const cases: [string, { code: number; message: string }][] = [
      ["file:///tmp/a?x=1", { code: ErrorCode.InvalidParams, message: "query parameters are not allowed in path URIs" }],
      ["file:///tmp/a#x", { code: ErrorCode.InvalidParams, message: "fragments are not allowed in path URIs" }],
      ["http://host/a", { code: ErrorCode.InvalidParams, message: "unsupported path URI scheme `http`" }],
      ["relative/path", { code: ErrorCode.InvalidParams, message: "invalid URI: relative URL without a base" }],
      ["file:///tmp/a%00", { code: ErrorCode.InvalidParams, message: "'file:///tmp/a%00' is invalid on 'linux'" }],
      ["file:///C:/x", { code: ErrorCode.InvalidRequest, message: "'file:///C:/x' is invalid on 'linux'" }],
      ["file://server/share/x", { code: ErrorCode.InvalidRequest, message: "'file://server/share/x' is invalid on 'linux'" }],
    ];
    for (const [path, error] of cases) expect(await refusal(client, "fs/readFile", { path }), path).toEqual(error);
  });
});

describe("fs/createDirectory, fs/getMetadata, fs/canonicalize", () => {
  it("creates nested directories, recursive by default (file_system_create_directory_creates_nested_directories)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const nested = join(root, "a", "b", "c");
    expect(await client.call("fs/createDirectory", { path: uri(nested), recursive: null })).toEqual({});
    expect(statSync(nested).isDirectory()).toBe(true);
    expect(await client.call("fs/createDirectory", { path: uri(nested) })).toEqual({});
    expect(await refusal(client, "fs/createDirectory", { path: uri(nested), recursive: false })).toEqual({
      code: ErrorCode.InternalError,
      message: "File exists (os error 17)",
    });
    expect(await refusal(client, "fs/createDirectory", { path: uri(join(root, "x", "y")), recursive: false })).toEqual(NOT_FOUND);
    writeFileSync(join(root, "file"), "");
    expect(await refusal(client, "fs/createDirectory", { path: uri(join(root, "file", "sub")) })).toEqual(NOT_A_DIRECTORY);
    // Where the parent exists but refuses new entries, the answer comes (Node's own recursive mkdir loops forever here).
    expect(await refusal(client, "fs/createDirectory", { path: "file:///proc/execmux-test" })).toEqual(NOT_FOUND);
  });

  it("with followSymlinks false, creates only through real directories", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    mkdirSync(join(root, "dir"));
    symlinkSync("dir", join(root, "dirlink"));
    await client.call("fs/createDirectory", { path: uri(join(root, "new", "deeper")), followSymlinks: false });
    expect(statSync(join(root, "new", "deeper")).isDirectory()).toBe(true);
    expect(await refusal(client, "fs/createDirectory", { path: uri(join(root, "dirlink", "x")), followSymlinks: false })).toEqual(
      NOT_A_DIRECTORY,
    );
    expect(existsSync(join(root, "dir", "x"))).toBe(false);
  });

  it("reports files, directories and symlinks (file_system_get_metadata_reports_files_and_directories)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const file = join(root, "file");
    writeFileSync(file, "12345");
    symlinkSync("file", join(root, "link"));
    symlinkSync("missing", join(root, "broken"));
    const metadata = (path: string, followSymlinks?: boolean) =>
      client.call<Record<string, unknown>>("fs/getMetadata", { path: uri(path), ...(followSymlinks === undefined ? {} : { followSymlinks }) });
    const ofFile = await metadata(file);
    expect(ofFile).toMatchObject({ isDirectory: false, isFile: true, isSymlink: false, size: 5 });
    expect(ofFile.modifiedAtMs).toBe(Math.floor(statSync(file).mtimeMs));
    expect(Number.isInteger(ofFile.createdAtMs)).toBe(true);
    expect(await metadata(root)).toMatchObject({ isDirectory: true, isFile: false, isSymlink: false });
    expect(await metadata(join(root, "link"))).toMatchObject({ isDirectory: false, isFile: true, isSymlink: true, size: 5 });
    expect(await refusal(client, "fs/getMetadata", { path: uri(join(root, "broken")) })).toEqual(NOT_FOUND);
    expect(await metadata(file, false)).toMatchObject({ isFile: true, isSymlink: false, size: 5 });
    expect(await refusal(client, "fs/getMetadata", { path: uri(join(root, "link")), followSymlinks: false })).toEqual({
      code: ErrorCode.InvalidRequest,
      message: "path contains a symbolic link",
    });
  });

  it("canonicalizes through symlinks into a percent-encoded URI", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const target = join(root, "real dir#1");
    mkdirSync(target);
    symlinkSync(target, join(root, "link"));
    expect(await client.call("fs/canonicalize", { path: uri(join(root, "link", ".")) })).toEqual({ path: uri(target) });
    expect((await client.call<{ path: string }>("fs/canonicalize", { path: uri(join(root, "link")) })).path).toMatch(/real%20dir%231$/);
    expect(await refusal(client, "fs/canonicalize", { path: uri(join(root, "missing")) })).toEqual(NOT_FOUND);
  });
});

describe("fs/readDirectory and fs/walk", () => {
  it("lists entries with symlinks resolved and broken ones skipped (file_system_read_directory_lists_entries)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    mkdirSync(join(root, "dir"));
    writeFileSync(join(root, "file"), "");
    symlinkSync("dir", join(root, "dirlink"));
    symlinkSync("missing", join(root, "broken"));
    mkfifo(join(root, "fifo"));
    const { entries } = await client.call<{ entries: { fileName: string }[] }>("fs/readDirectory", { path: uri(root) });
    expect(entries.sort((a, b) => a.fileName.localeCompare(b.fileName))).toEqual([
      { fileName: "dir", isDirectory: true, isFile: false },
      { fileName: "dirlink", isDirectory: true, isFile: false },
      { fileName: "fifo", isDirectory: false, isFile: false },
      { fileName: "file", isDirectory: false, isFile: true },
    ]);
    expect(await refusal(client, "fs/readDirectory", { path: uri(join(root, "file")) })).toEqual(NOT_A_DIRECTORY);
    expect(await refusal(client, "fs/readDirectory", { path: uri(join(root, "missing")) })).toEqual(NOT_FOUND);
  });

  it("walks breadth-first with sorted names, bounded (file_system_walk_returns_a_bounded_tree)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    for (const directory of ["b/bb/bbb", "a", ".hidden/inner", "c"]) mkdirSync(join(root, directory), { recursive: true });
    for (const file of ["z", "b/f", "b/bb/g", ".hidden/inner/h"]) writeFileSync(join(root, file), "");
    symlinkSync("b", join(root, "blink"));
    symlinkSync("z", join(root, "zlink"));
    symlinkSync("..", join(root, "b", "up"));
    mkfifo(join(root, "pipe"));
    const walk = async (options: Record<string, unknown>) => {
      const result = await client.call<{ entries: { path: string; kind: string }[]; errors: unknown[]; truncated: boolean }>("fs/walk", {
        path: uri(root),
        options: { maxDepth: 10, maxDirectories: 100, maxEntries: 1000, followDirectorySymlinks: false, ...options },
      });
      return { ...result, entries: result.entries.map(({ path, kind }) => `${path.slice(uri(root).length + 1)} ${kind}`) };
    };
    expect(await walk({})).toEqual({
      entries: [".hidden directory", "a directory", "b directory", "c directory", "z file", ".hidden/inner directory", "b/bb directory", "b/f file", ".hidden/inner/h file", "b/bb/bbb directory", "b/bb/g file"],
      errors: [],
      truncated: false,
    });
    // Directory symlinks are followed when asked, each directory once (blink is b; b/up is the root).
    expect((await walk({ followDirectorySymlinks: true })).entries).toEqual([
      ".hidden directory", "a directory", "b directory", "blink directory", "c directory", "z file",
      ".hidden/inner directory", "b/bb directory", "b/f file", "b/up directory", ".hidden/inner/h file", "b/bb/bbb directory", "b/bb/g file",
    ]);
    expect((await walk({ pruneHiddenDirectories: true })).entries).not.toContain(".hidden/inner directory");
    expect((await walk({ pruneHiddenDirectories: true })).entries).toContain(".hidden directory");
    expect(await walk({ maxDepth: 0 })).toEqual({ entries: [".hidden directory", "a directory", "b directory", "c directory", "z file"], errors: [], truncated: false });
    expect(await walk({ maxDepth: 1, maxDirectories: 2 })).toEqual({
      entries: [".hidden directory", "a directory", "b directory", "c directory", "z file", ".hidden/inner directory"],
      errors: [],
      truncated: true,
    });
    expect(await walk({ maxEntries: 3 })).toEqual({ entries: [".hidden directory", "a directory", "b directory"], errors: [], truncated: true });
  });

  it("checks limits before the root, and reports what it could not read (file_system_walk_handles_invalid_roots_and_limits)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    writeFileSync(join(root, "file"), "");
    // A name that is not UTF-8 is listed as U+FFFD, which names nothing: an error entry, as upstream.
    writeFileSync(Buffer.concat([Buffer.from(`${root}/`), Buffer.from([0xff])]), "");
    const walk = (path: string, limits: Record<string, number>) =>
      client.request("fs/walk", { path: uri(path), options: { maxDepth: 1, maxDirectories: 1, maxEntries: 10, followDirectorySymlinks: false, ...limits } });
    const zero = { code: ErrorCode.InvalidRequest, message: "filesystem walk limits must be greater than zero" };
    const tooLarge = { code: ErrorCode.InvalidRequest, message: "filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000" };
    expect((await walk(join(root, "missing"), { maxDirectories: 0 })).error).toEqual(zero);
    expect((await walk(root, { maxEntries: 0 })).error).toEqual(zero);
    expect((await walk(join(root, "missing"), { maxDepth: 65 })).error).toEqual(tooLarge);
    expect((await walk(root, { maxDirectories: 10_001 })).error).toEqual(tooLarge);
    expect((await walk(root, { maxEntries: 50_001 })).error).toEqual(tooLarge);
    expect((await walk(join(root, "missing"), {})).error).toEqual(NOT_FOUND);
    expect((await walk(join(root, "file"), {})).result).toEqual({ entries: [], errors: [], truncated: false });
    expect((await walk(root, {})).result).toEqual({
      entries: [{ path: uri(join(root, "file")), kind: "file" }],
      errors: [{ path: `${uri(root)}/%EF%BF%BD`, message: "No such file or directory (os error 2)" }],
      truncated: false,
    });
  });

  describe("a directory of 50,001 entries", () => {
    let root = "";
    beforeAll(() => {
      // On tmpfs when there is one: making 50,001 files on a busy disk takes tens of seconds.
      root = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "execmux-fs-huge-"));
      const prefix = "x".repeat(100);
      for (let index = 0; index <= 50_000; index++) closeSync(openSync(join(root, `${prefix}${String(index).padStart(5, "0")}`), "w"));
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it("is too many for fs/readDirectory, which stops reading past the limit", async () => {
      const { client } = await connect();
      expect(await refusal(client, "fs/readDirectory", { path: uri(root) })).toEqual({
        code: ErrorCode.InternalError,
        message: "fs/readDirectory returned more than 50000 entries; limit is 50000",
      });
    });

    it("truncates fs/walk at the reply's 4 MiB estimate, while the event loop keeps turning", async () => {
      const { client } = await connect();
      let turns = 0;
      let walking = true;
      const turn = () => {
        turns++;
        if (walking) setImmediate(turn);
      };
      setImmediate(turn);
      const result = await client.call<{ entries: { path: string }[]; truncated: boolean }>("fs/walk", {
        path: uri(root),
        options: { maxDepth: 1, maxDirectories: 1, maxEntries: 50_000, followDirectorySymlinks: false },
      });
      walking = false;
      const estimate = result.entries.reduce((sum, entry) => sum + entry.path.length + 64, 0);
      expect(result.truncated).toBe(true);
      expect(estimate).toBeLessThanOrEqual(4 * 1024 * 1024);
      expect(estimate + result.entries[0]!.path.length + 64).toBeGreaterThan(4 * 1024 * 1024);
      // Sorted: the smallest names of the directory, in order.
      expect(result.entries[0]!.path.endsWith("00000")).toBe(true);
      expect(result.entries.at(-1)!.path.endsWith(String(result.entries.length - 1).padStart(5, "0"))).toBe(true);
      // Every entry's metadata was awaited: the daemon's event loop (this process's) went round many times.
      expect(turns).toBeGreaterThan(1000);
    });
  });
});

describe("fs/remove", () => {
  it("removes a directory tree, recursive and force by default (file_system_remove_removes_directory)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const outside = join(root, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "keep"), "");
    mkdirSync(join(root, "tree", "sub"), { recursive: true });
    writeFileSync(join(root, "tree", "sub", "file"), "");
    symlinkSync(outside, join(root, "tree", "link"));
    expect(await client.call("fs/remove", { path: uri(join(root, "tree")) })).toEqual({});
    expect(existsSync(join(root, "tree"))).toBe(false);
    // A symlink in the tree is removed, never followed.
    expect(existsSync(join(outside, "keep"))).toBe(true);
    expect(await client.call("fs/remove", { path: uri(join(root, "tree")) })).toEqual({});
    expect(await refusal(client, "fs/remove", { path: uri(join(root, "tree")), force: false })).toEqual(NOT_FOUND);
    mkdirSync(join(root, "full"));
    writeFileSync(join(root, "full", "file"), "");
    expect(await refusal(client, "fs/remove", { path: uri(join(root, "full")), recursive: false })).toEqual({
      code: ErrorCode.InternalError,
      message: "Directory not empty (os error 39)",
    });
    symlinkSync(outside, join(root, "dirlink"));
    await client.call("fs/remove", { path: uri(join(root, "dirlink")) });
    expect(existsSync(join(root, "dirlink"))).toBe(false);
    expect(existsSync(join(outside, "keep"))).toBe(true);
  });

  it("with followSymlinks false, removes a file and an empty directory only (file_system_remove_no_follow_removes_file_and_empty_directory)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    writeFileSync(join(root, "file"), "");
    mkdirSync(join(root, "empty"));
    symlinkSync("file", join(root, "link"));
    const noFollow = (path: string, extra: Record<string, unknown> = {}) => ({ path: uri(join(root, path)), followSymlinks: false, recursive: false, ...extra });
    expect(await client.call("fs/remove", noFollow("file"))).toEqual({});
    expect(await client.call("fs/remove", noFollow("empty"))).toEqual({});
    expect(existsSync(join(root, "file")) || existsSync(join(root, "empty"))).toBe(false);
    expect(await refusal(client, "fs/remove", noFollow("link"))).toEqual({ code: ErrorCode.InvalidRequest, message: "path contains a symbolic link" });
    expect(await client.call("fs/remove", noFollow("gone"))).toEqual({});
    expect(await refusal(client, "fs/remove", noFollow("gone", { force: false }))).toEqual(NOT_FOUND);
    expect(await refusal(client, "fs/remove", noFollow("link", { recursive: true }))).toEqual({
      code: ErrorCode.InternalError,
      message: "recursive no-follow removal is unsupported",
    });
  });
});

describe("fs/copy", () => {
  it("copies a file with its permission bits (file_system_copy_copies_file)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    writeFileSync(join(root, "source"), "payload", { mode: 0o751 });
    expect(await client.call("fs/copy", { sourcePath: uri(join(root, "source")), destinationPath: uri(join(root, "copy")), recursive: false })).toEqual({});
    expect(readFileSync(join(root, "copy"), "utf8")).toBe("payload");
    expect(statSync(join(root, "copy")).mode & 0o777).toBe(0o751);
    // Onto itself, the file is left whole (upstream truncates it).
    await client.call("fs/copy", { sourcePath: uri(join(root, "copy")), destinationPath: uri(join(root, "copy")), recursive: false });
    expect(readFileSync(join(root, "copy"), "utf8")).toBe("payload");
    expect(await refusal(client, "fs/copy", { sourcePath: uri(join(root, "missing")), destinationPath: uri(join(root, "x")), recursive: false })).toEqual(NOT_FOUND);
  });

  it("copies a directory recursively, symlinks as symlinks, other kinds skipped (file_system_copy_copies_directory_recursively)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const source = join(root, "source");
    mkdirSync(join(source, "sub"), { recursive: true });
    writeFileSync(join(source, "a"), "a");
    writeFileSync(join(source, "sub", "b"), "b");
    symlinkSync("a", join(source, "alink"));
    symlinkSync("/nonexistent", join(source, "broken"));
    mkfifo(join(source, "fifo"));
    await client.call("fs/copy", { sourcePath: uri(source), destinationPath: uri(join(root, "copy")), recursive: true });
    expect(readdirSync(join(root, "copy")).sort()).toEqual(["a", "alink", "broken", "sub"]);
    expect(readFileSync(join(root, "copy", "sub", "b"), "utf8")).toBe("b");
    expect(readlinkSync(join(root, "copy", "alink"))).toBe("a");
    expect(readlinkSync(join(root, "copy", "broken"))).toBe("/nonexistent");
    // A symlink at the top is copied as a symlink too.
    await client.call("fs/copy", { sourcePath: uri(join(source, "alink")), destinationPath: uri(join(root, "toplink")), recursive: false });
    expect(lstatSync(join(root, "toplink")).isSymbolicLink()).toBe(true);
  });

  it("refuses a directory without recursive, into itself, and kinds it cannot copy (file_system_copy_rejects_directory_without_recursive, file_system_copy_rejects_copying_directory_into_descendant)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const source = join(root, "source");
    mkdirSync(source);
    symlinkSync(source, join(root, "sourcelink"));
    mkfifo(join(root, "fifo"));
    const copy = (from: string, to: string, recursive: boolean) => refusal(client, "fs/copy", { sourcePath: uri(from), destinationPath: uri(to), recursive });
    expect(await copy(source, join(root, "copy"), false)).toEqual({
      code: ErrorCode.InvalidRequest,
      message: "fs/copy requires recursive: true when sourcePath is a directory",
    });
    const intoItself = { code: ErrorCode.InvalidRequest, message: "fs/copy cannot copy a directory to itself or one of its descendants" };
    expect(await copy(source, source, true)).toEqual(intoItself);
    expect(await copy(source, join(source, "a", "b"), true)).toEqual(intoItself);
    expect(await copy(source, join(root, "sourcelink", "inner"), true)).toEqual(intoItself);
    expect(await copy(join(root, "fifo"), join(root, "fifo2"), true)).toEqual({
      code: ErrorCode.InvalidRequest,
      message: "fs/copy only supports regular files, directories, and symlinks",
    });
    expect(await client.request("fs/copy", { sourcePath: uri(source), destinationPath: uri(join(root, "x")) })).toMatchObject({
      error: { code: ErrorCode.InvalidParams, message: "missing field `recursive`" },
    });
  });
});

describe("fs/open, fs/readBlock, fs/close", () => {
  /** Every block of a handle from offset 0 until `eof`, as Codex's client reads a stream. */
  async function readStream(client: WireClient, handleId: string, len: number): Promise<{ chunks: string[]; eofs: boolean[] }> {
    const chunks: string[] = [];
    const eofs: boolean[] = [];
    for (let offset = 0; ; ) {
      const block = await client.call<{ chunk: string; eof: boolean }>("fs/readBlock", { handleId, offset, len });
      chunks.push(unb64(block.chunk));
      eofs.push(block.eof);
      offset += Buffer.from(block.chunk, "base64").length;
      if (block.eof) return { chunks, eofs };
    }
  }

  it("stops after an exact block boundary (stream_stops_after_an_exact_block_boundary)", async () => {
    const { client } = await connect();
    const path = join(scratchDirectory("fs"), "eight");
    writeFileSync(path, "01234567");
    await client.call("fs/open", { handleId: "h", path: uri(path) });
    expect(await readStream(client, "h", 4)).toEqual({ chunks: ["0123", "4567", ""], eofs: [false, false, true] });
  });

  it("reads any offset in any order and stays open at EOF (read_block_supports_non_sequential_offsets_and_lengths)", async () => {
    const { client } = await connect();
    const path = join(scratchDirectory("fs"), "ten");
    writeFileSync(path, "0123456789");
    expect(await client.call("fs/open", { handleId: "h1", path: uri(path) })).toEqual({ handleId: "h1" });
    const block = (offset: number, len: number) => client.call("fs/readBlock", { handleId: "h1", offset, len });
    expect(await block(6, 3)).toEqual({ chunk: b64("678"), eof: false });
    expect(await block(1, 2)).toEqual({ chunk: b64("12"), eof: false });
    expect(await block(8, 4)).toEqual({ chunk: b64("89"), eof: true });
    expect(await block(0, 2)).toEqual({ chunk: b64("01"), eof: false });
    expect(await block(100, 2)).toEqual({ chunk: "", eof: true });
    expect(await block(0, 1_048_576)).toEqual({ chunk: b64("0123456789"), eof: true });
  });

  it("keeps reading the open file after its path is replaced (stream_keeps_reading_the_open_file_after_path_replacement)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const path = join(root, "file");
    writeFileSync(path, "original");
    await client.call("fs/open", { handleId: "h", path: uri(path) });
    writeFileSync(join(root, "replacement"), "replaced!");
    renameSync(join(root, "replacement"), path);
    expect(await client.call("fs/readBlock", { handleId: "h", offset: 0, len: 100 })).toEqual({ chunk: b64("original"), eof: true });
    expect(await client.call("fs/readFile", { path: uri(path) })).toEqual({ dataBase64: b64("replaced!") });
  });

  it("allows 128 open handles per connection, and close frees one (open_enforces_the_per_connection_limit_and_close_releases_capacity)", async () => {
    const { daemon, client } = await connect();
    const path = join(scratchDirectory("fs"), "file");
    writeFileSync(path, "x");
    for (let index = 0; index < 128; index++) await client.call("fs/open", { handleId: `h${index}`, path: uri(path) });
    const limit = { code: ErrorCode.InvalidRequest, message: "at most 128 file handles may be open per connection" };
    expect(await refusal(client, "fs/open", { handleId: "h128", path: uri(path) })).toEqual(limit);
    expect(await refusal(client, "fs/open", { handleId: "h0", path: uri(path) })).toEqual({
      code: ErrorCode.InvalidRequest,
      message: "file handle `h0` already exists",
    });
    // The limit is checked before the file is opened.
    expect(await refusal(client, "fs/open", { handleId: "h128", path: uri(join(path, "missing")) })).toEqual(limit);
    // Another connection has its own 128.
    const other = await WireClient.ready(daemon.url);
    expect(await other.call("fs/open", { handleId: "h0", path: uri(path) })).toEqual({ handleId: "h0" });
    expect(await client.call("fs/close", { handleId: "h5" })).toEqual({});
    expect(await client.call("fs/close", { handleId: "h5" })).toEqual({});
    expect(await client.call("fs/close", { handleId: "never-opened" })).toEqual({});
    expect(await client.call("fs/open", { handleId: "h128", path: uri(path) })).toEqual({ handleId: "h128" });
    expect(await refusal(client, "fs/readBlock", { handleId: "h5", offset: 0, len: 1 })).toEqual({
      code: ErrorCode.NotFound,
      message: "unknown file handle `h5`",
    });
  });

  it("releases capacity as streams complete: 129 in a row (completed_streams_release_handle_capacity)", async () => {
    const { client } = await connect();
    const path = join(scratchDirectory("fs"), "file");
    writeFileSync(path, "abc");
    for (let index = 0; index < 129; index++) {
      const handleId = `stream-${index}`;
      await client.call("fs/open", { handleId, path: uri(path) });
      expect((await readStream(client, handleId, 2)).chunks.join("")).toBe("abc");
      await client.call("fs/close", { handleId });
    }
  });

  it("refuses ids over 32 bytes, bad lengths and files that are not regular (open_rejects_handle_ids_longer_than_32_bytes)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const path = join(root, "file");
    writeFileSync(path, "x");
    mkfifo(join(root, "fifo"));
    const tooLong = { code: ErrorCode.InvalidRequest, message: "file handle ID must not exceed 32 bytes" };
    expect(await refusal(client, "fs/open", { handleId: "a".repeat(33), path: uri(path) })).toEqual(tooLong);
    // Bytes, not characters: 17 two-byte characters are 34 bytes.
    expect(await refusal(client, "fs/open", { handleId: "é".repeat(17), path: uri(path) })).toEqual(tooLong);
    expect(await client.call("fs/open", { handleId: "é".repeat(16), path: uri(path) })).toEqual({ handleId: "é".repeat(16) });
    expect(await client.call("fs/open", { handleId: "a".repeat(32), path: uri(path) })).toEqual({ handleId: "a".repeat(32) });
    expect(await refusal(client, "fs/readBlock", { handleId: "a".repeat(33), offset: 0, len: 1 })).toEqual(tooLong);
    expect(await refusal(client, "fs/close", { handleId: "a".repeat(33) })).toEqual(tooLong);
    const badLength = { code: ErrorCode.InvalidRequest, message: "file read block length must be between 1 and 1048576" };
    expect(await refusal(client, "fs/readBlock", { handleId: "a".repeat(32), offset: 0, len: 0 })).toEqual(badLength);
    expect(await refusal(client, "fs/readBlock", { handleId: "a".repeat(32), offset: 0, len: 1_048_577 })).toEqual(badLength);
    expect(await refusal(client, "fs/open", { handleId: "f", path: uri(join(root, "fifo")) })).toEqual({
      code: ErrorCode.InvalidRequest,
      message: `path \`${join(root, "fifo")}\` is not a file`,
    });
    expect(await refusal(client, "fs/open", { handleId: "f", path: uri(join(root, "missing")) })).toEqual(NOT_FOUND);
    // A failed open leaves the id free.
    expect(await client.call("fs/open", { handleId: "f", path: uri(path) })).toEqual({ handleId: "f" });
  });

  it("closes a connection's handles when it closes", async () => {
    const { client } = await connect();
    const path = join(scratchDirectory("fs"), "watched");
    writeFileSync(path, "x");
    // The daemon runs in this process: its descriptors are this process's.
    const openOnFile = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === path;
        } catch {
          return false;
        }
      }).length;
    for (let index = 0; index < 5; index++) await client.call("fs/open", { handleId: `h${index}`, path: uri(path) });
    expect(openOnFile()).toBe(5);
    client.close();
    await vi.waitFor(() => expect(openOnFile()).toBe(0));
  });
});

describe("large replies", () => {
  /** Requests of `method` answered so far, from the daemon's /metrics. */
  const completedRequests = (daemon: Daemon, method: string) => metric(daemon.url, "execmux_request_duration_seconds_count", `method="${method}"`);

  it("are read one at a time, only once the client has taken the previous one", async () => {
    const { daemon, client } = await connect();
    const root = scratchDirectory("fs");
    const big = join(root, "big");
    writeFileSync(big, "");
    truncateSync(big, 12_000_000);
    const small = join(root, "small");
    writeFileSync(small, "before");
    await client.call("fs/open", { handleId: "small", path: uri(small) });
    client.pauseReading();
    const whole = client.request("fs/readFile", { path: uri(big) });
    const block = client.request("fs/readBlock", { handleId: "small", offset: 0, len: 6 });
    // The whole file's 16 MB reply is queued and the client reads nothing:
    // the block must not have been read yet, so it sees what is written now.
    await vi.waitFor(async () => expect(await completedRequests(daemon, "fs/readFile")).toBe(1), { timeout: 30_000 });
    writeFileSync(small, "after!");
    client.resumeReading();
    expect(Buffer.from(String((await whole).result?.dataBase64), "base64").length).toBe(12_000_000);
    expect(unb64((await block).result?.chunk)).toBe("after!");
  });
});

describe("sandbox", () => {
  it("runs reads of a full-disk-read profile directly and its writes confined (file_system_full_disk_read_skips_sandbox_only_for_reads)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    writeFileSync(join(root, "file"), "data");
    const sandbox = workspaceWriteSandbox(root);
    expect(await client.call("fs/readFile", { path: uri(join(root, "file")), sandbox })).toEqual({ dataBase64: b64("data") });
    expect(await client.call("fs/getMetadata", { path: uri(join(root, "file")), sandbox })).toMatchObject({ isFile: true });
    await client.call("fs/open", { handleId: "h", path: uri(join(root, "file")), sandbox });
    // Writes run inside the sandbox (sandbox-fs-escape.test.ts tries the escapes): inside the project they work.
    await client.call("fs/writeFile", { path: uri(join(root, "new")), dataBase64: b64("x"), sandbox });
    await client.call("fs/createDirectory", { path: uri(join(root, "dir")), sandbox });
    await client.call("fs/copy", { sourcePath: uri(join(root, "file")), destinationPath: uri(join(root, "copy")), recursive: false, sandbox });
    await client.call("fs/remove", { path: uri(join(root, "file")), sandbox });
    expect(readdirSync(root).sort()).toEqual(["copy", "dir", "new"]);
    expect(readFileSync(join(root, "copy"), "utf8")).toBe("data");
  });

  it("confines reads a restricted profile restricts, and refuses what bubblewrap cannot enforce (file_system_restricted_reads_require_sandbox)", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    writeFileSync(join(root, "file"), "data");
    const restricted = (entries: unknown[]) => ({
      permissions: { type: "managed", file_system: { type: "restricted", entries }, network: "restricted" },
      policyContext: { cwd: uri(root), workspaceRoots: [uri(root)] },
      windowsSandboxLevel: "disabled",
    });
    const readable = { path: { type: "path", path: uri(root) }, access: "read" };
    const rootRead = { path: { type: "special", value: { kind: "root" } }, access: "read" };
    const denied = { path: { type: "glob_pattern", pattern: "**/*.env" }, access: "deny" };
    const noFullRead = /^sandbox profiles without full-disk read .* are not supported by this executor's sandbox$/;
    const noGlobs = /glob patterns cannot be enforced by this executor's sandbox/;
    for (const [entries, refused] of [[[readable], noFullRead], [[], noFullRead], [[rootRead, denied], noGlobs]] as const) {
      for (const method of ["fs/readFile", "fs/getMetadata", "fs/readDirectory", "fs/canonicalize"]) {
        expect(await refusal(client, method, { path: uri(join(root, "file")), sandbox: restricted([...entries]) })).toEqual({
          code: ErrorCode.InvalidParams,
          message: expect.stringMatching(refused),
        });
      }
      // Walks and streamed reads run confined too (sandboxedFileStreaming), so they are refused for the same reasons.
      expect(await refusal(client, "fs/walk", {
        path: uri(root),
        options: { maxDepth: 1, maxDirectories: 1, maxEntries: 1, followDirectorySymlinks: false },
        sandbox: restricted([...entries]),
      })).toEqual({ code: ErrorCode.InvalidParams, message: expect.stringMatching(refused) });
      expect(await refusal(client, "fs/open", { handleId: "h", path: uri(join(root, "file")), sandbox: restricted([...entries]) })).toEqual({
        code: ErrorCode.InvalidParams,
        message: expect.stringMatching(refused),
      });
    }
  });

  it("runs everything directly for profiles without filesystem restrictions", async () => {
    const { client } = await connect();
    const root = scratchDirectory("fs");
    const profiles = [
      { type: "disabled" },
      { type: "external", network: "restricted" },
      { type: "managed", file_system: { type: "unrestricted" }, network: "enabled" },
      {
        type: "managed",
        file_system: { type: "restricted", entries: [{ path: { type: "special", value: { kind: "root" } }, access: "write" }] },
        network: "restricted",
      },
    ];
    for (const [index, permissions] of profiles.entries()) {
      const path = uri(join(root, `file-${index}`));
      const sandbox = { permissions, windowsSandboxLevel: "disabled" };
      await client.call("fs/writeFile", { path, dataBase64: b64(String(index)), sandbox });
      expect(await client.call("fs/readFile", { path, sandbox })).toEqual({ dataBase64: b64(String(index)) });
    }
  });

  it("checks the context itself first, as upstream", async () => {
    const { client } = await connect();
    const path = uri(join(scratchDirectory("fs"), "file"));
    const managed = (entries: unknown[]) => ({ type: "managed", file_system: { type: "restricted", entries }, network: "restricted" });
    const rootRead = { path: { type: "special", value: { kind: "root" } }, access: "read" };
    expect(await refusal(client, "fs/readFile", { path, sandbox: { permissions: { type: "disabled" } } })).toEqual({
      code: ErrorCode.InvalidParams,
      message: "missing field `windowsSandboxLevel`",
    });
    expect(await refusal(client, "fs/readFile", {
      path,
      sandbox: { permissions: managed([rootRead, { path: { type: "special", value: { kind: "project_roots" } }, access: "write" }]), windowsSandboxLevel: "disabled" },
    })).toEqual({ code: ErrorCode.InvalidParams, message: "file system sandbox context with dynamic permissions requires cwd" });
    expect(await refusal(client, "fs/readFile", {
      path,
      sandbox: { permissions: managed([rootRead, { path: { type: "path", path: "file:///C:/x" }, access: "read" }]), windowsSandboxLevel: "disabled" },
    })).toEqual({ code: ErrorCode.InvalidRequest, message: "invalid sandbox permission path URI: 'file:///C:/x' is invalid on 'linux'" });
  });
});

describe("agreement with upstream", () => {
  function fixture(root: string): void {
    mkdirSync(join(root, "dir", "sub"), { recursive: true });
    writeFileSync(join(root, "ten"), "0123456789");
    writeFileSync(join(root, "dir", "sub", "file"), "x");
    writeFileSync(join(root, "dir", ".dotfile"), "");
    symlinkSync("ten", join(root, "link"));
    symlinkSync("dir", join(root, "dirlink"));
    symlinkSync("missing", join(root, "broken"));
    mkfifo(join(root, "fifo"));
  }

  /** Frames whose replies must match codex 0.169.0's, with ROOT standing for the fixture. */
  const frames: [string, Record<string, unknown>][] = [
    ["fs/readFile", { path: "ROOT/ten" }],
    ["fs/readFile", { path: "ROOT/missing" }],
    ["fs/readFile", { path: "ROOT/dir" }],
    ["fs/readFile", { path: "ROOT/fifo" }],
    ["fs/readFile", { path: "ROOT/link", followSymlinks: false }],
    ["fs/readFile", { path: "ROOT/dirlink/sub/file", followSymlinks: false }],
    ["fs/readFile", { path: "ROOT/fifo", followSymlinks: false }],
    ["fs/readFile", { path: "ROOT/ten?x=1" }],
    ["fs/readFile", { path: "file:///C:/x" }],
    ["fs/writeFile", { path: "ROOT/no/such", dataBase64: "" }],
    ["fs/writeFile", { path: "ROOT/ten", dataBase64: "aGk" }],
    ["fs/writeFile", { path: "ROOT/dir", dataBase64: "" }],
    ["fs/writeFile", { path: "ROOT/link", dataBase64: "", followSymlinks: false }],
    ["fs/createDirectory", { path: "ROOT/dir", recursive: false }],
    ["fs/createDirectory", { path: "ROOT/a/b", recursive: false }],
    ["fs/createDirectory", { path: "ROOT/ten/x" }],
    ["fs/createDirectory", { path: "ROOT/dirlink/y", followSymlinks: false }],
    ["fs/getMetadata", { path: "ROOT/link", followSymlinks: false }],
    ["fs/getMetadata", { path: "ROOT/broken" }],
    ["fs/getMetadata", { path: "ROOT/link" }],
    ["fs/canonicalize", { path: "ROOT/dirlink/sub" }],
    ["fs/canonicalize", { path: "ROOT/missing" }],
    ["fs/readDirectory", { path: "ROOT/ten" }],
    ["fs/walk", { path: "ROOT", options: { maxDepth: 5, maxDirectories: 10, maxEntries: 100, followDirectorySymlinks: true } }],
    ["fs/walk", { path: "ROOT", options: { maxDepth: 5, maxDirectories: 0, maxEntries: 100, followDirectorySymlinks: false } }],
    ["fs/walk", { path: "ROOT/missing", options: { maxDepth: 65, maxDirectories: 1, maxEntries: 1, followDirectorySymlinks: false } }],
    ["fs/walk", { path: "ROOT/missing", options: { maxDepth: 1, maxDirectories: 1, maxEntries: 1, followDirectorySymlinks: false } }],
    ["fs/remove", { path: "ROOT/dir", recursive: false }],
    ["fs/remove", { path: "ROOT/link", followSymlinks: false }],
    ["fs/remove", { path: "ROOT/link", followSymlinks: false, recursive: false }],
    ["fs/remove", { path: "ROOT/gone", force: false }],
    ["fs/copy", { sourcePath: "ROOT/dir", destinationPath: "ROOT/copy", recursive: false }],
    ["fs/copy", { sourcePath: "ROOT/dir", destinationPath: "ROOT/dir/sub/copy", recursive: true }],
    ["fs/copy", { sourcePath: "ROOT/fifo", destinationPath: "ROOT/copy", recursive: true }],
    ["fs/open", { handleId: "h", path: "ROOT/ten" }],
    ["fs/open", { handleId: "h", path: "ROOT/ten" }],
    ["fs/open", { handleId: "0123456789abcdef0123456789abcdef0", path: "ROOT/ten" }],
    ["fs/open", { handleId: "f", path: "ROOT/fifo" }],
    ["fs/readBlock", { handleId: "h", offset: 6, len: 3 }],
    ["fs/readBlock", { handleId: "h", offset: 8, len: 4 }],
    ["fs/readBlock", { handleId: "h", offset: 0, len: 0 }],
    ["fs/readBlock", { handleId: "nope", offset: 0, len: 1 }],
    ["fs/close", { handleId: "h" }],
    ["fs/readBlock", { handleId: "h", offset: 0, len: 1 }],
  ];

  async function replies(url: string, root: string): Promise<unknown[]> {
    const client = await WireClient.ready(url);
    const rootUri = uri(root);
    const answers: unknown[] = [];
    for (const [method, params] of frames) {
      const json = JSON.stringify(params).replaceAll("ROOT", rootUri);
      const reply: WireMessage = await client.request(method, JSON.parse(json));
      const text = JSON.stringify(reply.error ?? reply.result).replaceAll(rootUri, "ROOT").replaceAll(root, "ROOT");
      // Times differ between any two files; the rest must not.
      answers.push(JSON.parse(text, (key, value: unknown) => (key.endsWith("AtMs") ? "time" : value)));
    }
    client.close();
    return answers;
  }

  it("answers every sampled frame as codex 0.169.0 does", async () => {
    const upstream = await startUpstreamExecServer();
    const upstreamRoot = scratchDirectory("fs-upstream");
    const ourRoot = scratchDirectory("fs-ours");
    fixture(upstreamRoot);
    fixture(ourRoot);
    const daemon = await startTestDaemon();
    const theirs = await replies(upstream.url, upstreamRoot);
    const ours = await replies(daemon.url, ourRoot);
    for (const [index, [method, params]] of frames.entries()) {
      expect(ours[index], `${method} ${JSON.stringify(params)}`).toEqual(theirs[index]);
    }
  });
});
