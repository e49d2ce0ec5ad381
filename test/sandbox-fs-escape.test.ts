/**
 * fs/* writes under Codex's workspace-write profile, against a real daemon
 * with real bubblewrap: each runs inside the sandbox, so every escape the
 * issue lists (outside the writable roots, a symlink planted in the project,
 * `..`, the read-only `.git`, a hard link to an outside file) fails and
 * leaves the outside as it was, while the same calls inside the project
 * succeed (so a broken probe cannot pass for a working sandbox).
 */
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { codexSandbox, ErrorCode, pathToFileUri } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient, b64 } from "./helpers/wire-client.js";

const READ_ONLY = { code: ErrorCode.InternalError, message: "Read-only file system (os error 30)" };
const uri = pathToFileUri;

/** Outside every writable root of the profile (/tmp and $TMPDIR are writable there). */
function outsideDirectory(): string {
  const directory = mkdtempSync("/var/tmp/execmux-fs-outside-");
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  writeFileSync(join(directory, "kept.txt"), "outside\n");
  return directory;
}

function project(): string {
  const root = scratchDirectory("sandbox-fs-project");
  mkdirSync(join(root, ".git"));
  writeFileSync(join(root, ".git", "config"), "[core]\n");
  writeFileSync(join(root, "inside.txt"), "inside\n");
  return root;
}

/** The wire form Codex sends with fs/*: the profile's cwd and roots in policyContext. */
function wireSandbox(root: string) {
  const { cwd: _cwd, workspaceRoots: _roots, ...rest } = codexSandbox("workspace-write", root);
  return { ...rest, policyContext: { cwd: uri(root), workspaceRoots: [uri(root)] } };
}

async function refusal(client: WireClient, method: string, params: Record<string, unknown>): Promise<{ code: number; message: string }> {
  const reply = await client.request(method, params);
  if (!reply.error) throw new Error(`${method} ${JSON.stringify(params)} succeeded`);
  return { code: reply.error.code, message: reply.error.message };
}

/** The outside directory's names and contents, to show nothing changed there. */
function snapshot(directory: string): Record<string, string> {
  return Object.fromEntries(readdirSync(directory).sort().map((name) => [name, readFileSync(join(directory, name), "utf8")]));
}

describe("fs/* writes under workspace-write (bubblewrap)", () => {
  it("write, create, copy and remove inside the project", async () => {
    const root = project();
    const outside = outsideDirectory();
    const client = await WireClient.ready((await startTestDaemon()).url);
    const sandbox = wireSandbox(root);
    await client.call("fs/writeFile", { path: uri(join(root, "new.txt")), dataBase64: b64("written\n"), sandbox });
    await client.call("fs/writeFile", { path: uri(join(root, "inside.txt")), dataBase64: b64("replaced\n"), sandbox });
    await client.call("fs/createDirectory", { path: uri(join(root, "a", "b")), recursive: true, sandbox });
    await client.call("fs/copy", { sourcePath: uri(join(root, "new.txt")), destinationPath: uri(join(root, "a", "b", "copy.txt")), recursive: false, sandbox });
    // Reading the whole disk is allowed: a copy from outside into the project works.
    await client.call("fs/copy", { sourcePath: uri(join(outside, "kept.txt")), destinationPath: uri(join(root, "fetched.txt")), recursive: false, sandbox });
    await client.call("fs/remove", { path: uri(join(root, "new.txt")), sandbox });
    expect(readFileSync(join(root, "inside.txt"), "utf8")).toBe("replaced\n");
    expect(readFileSync(join(root, "a", "b", "copy.txt"), "utf8")).toBe("written\n");
    expect(readFileSync(join(root, "fetched.txt"), "utf8")).toBe("outside\n");
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    // Errors map as upstream's: a missing parent is NotFound.
    expect(await refusal(client, "fs/writeFile", { path: uri(join(root, "no", "such")), dataBase64: b64("x"), sandbox })).toEqual({
      code: ErrorCode.NotFound,
      message: "No such file or directory (os error 2)",
    });
  });

  it("cannot write outside the writable roots, through a planted symlink, or through `..`", async () => {
    const root = project();
    const outside = outsideDirectory();
    symlinkSync(outside, join(root, "planted"));
    const before = snapshot(outside);
    const client = await WireClient.ready((await startTestDaemon()).url);
    const sandbox = wireSandbox(root);
    const ways = {
      outside: (name: string) => join(outside, name),
      "planted symlink": (name: string) => join(root, "planted", name),
      "..": (name: string) => `${root}/../../..${outside}/${name}`,
    };
    for (const [way, target] of Object.entries(ways)) {
      const attempts: [string, Record<string, unknown>][] = [
        ["fs/writeFile", { path: uri(target("escaped.txt")), dataBase64: b64("escaped\n"), sandbox }],
        ["fs/writeFile", { path: uri(target("kept.txt")), dataBase64: b64("overwritten\n"), sandbox }],
        ["fs/createDirectory", { path: uri(target("made")), recursive: true, sandbox }],
        ["fs/createDirectory", { path: uri(target("made")), recursive: false, sandbox }],
        ["fs/copy", { sourcePath: uri(join(root, "inside.txt")), destinationPath: uri(target("copied.txt")), recursive: false, sandbox }],
        ["fs/remove", { path: uri(target("kept.txt")), sandbox }],
      ];
      for (const [method, params] of attempts) {
        expect(await refusal(client, method, params), `${method} via ${way}`).toEqual(READ_ONLY);
      }
    }
    expect(snapshot(outside)).toEqual(before);
  });

  it("cannot write into .git (a read-only subpath of the project)", async () => {
    const root = project();
    const client = await WireClient.ready((await startTestDaemon()).url);
    const sandbox = wireSandbox(root);
    const git = (name: string) => uri(join(root, ".git", name));
    expect(await refusal(client, "fs/writeFile", { path: git("config"), dataBase64: b64("[evil]\n"), sandbox })).toEqual(READ_ONLY);
    expect(await refusal(client, "fs/writeFile", { path: git("hooks-pre-commit"), dataBase64: b64("#!/bin/sh\n"), sandbox })).toEqual(READ_ONLY);
    expect(await refusal(client, "fs/createDirectory", { path: git("hooks"), sandbox })).toEqual(READ_ONLY);
    expect(await refusal(client, "fs/copy", { sourcePath: uri(join(root, "inside.txt")), destinationPath: git("config"), recursive: false, sandbox })).toEqual(READ_ONLY);
    expect(await refusal(client, "fs/remove", { path: uri(join(root, ".git")), sandbox })).toEqual(READ_ONLY);
    expect(readdirSync(join(root, ".git"))).toEqual(["config"]);
    expect(readFileSync(join(root, ".git", "config"), "utf8")).toBe("[core]\n");
  });

  it("does not write through a hard link to an outside file", async () => {
    const root = project();
    const outside = outsideDirectory();
    // Planted from outside the sandbox: inside it, a link across mounts fails (EXDEV).
    linkSync(join(outside, "kept.txt"), join(root, "hard.txt"));
    const client = await WireClient.ready((await startTestDaemon()).url);
    const sandbox = wireSandbox(root);
    const refused = {
      code: ErrorCode.InvalidRequest,
      message: `refusing to write \`${join(root, "hard.txt")}\` under a sandbox: it has 2 hard links, which may lie outside the writable roots`,
    };
    expect(await refusal(client, "fs/writeFile", { path: uri(join(root, "hard.txt")), dataBase64: b64("overwritten\n"), sandbox })).toEqual(refused);
    expect(await refusal(client, "fs/writeFile", { path: uri(join(root, "hard.txt")), dataBase64: b64("overwritten\n"), followSymlinks: false, sandbox })).toEqual(refused);
    expect(await refusal(client, "fs/copy", { sourcePath: uri(join(root, "inside.txt")), destinationPath: uri(join(root, "hard.txt")), recursive: false, sandbox })).toEqual(refused);
    expect(readFileSync(join(outside, "kept.txt"), "utf8")).toBe("outside\n");
    // Removing the project's name for it is fine: the outside file stays.
    await client.call("fs/remove", { path: uri(join(root, "hard.txt")), sandbox });
    expect(readFileSync(join(outside, "kept.txt"), "utf8")).toBe("outside\n");
  });

  it("reads confined where the profile denies a path, and directly elsewhere", async () => {
    const root = project();
    const secret = outsideDirectory();
    const client = await WireClient.ready((await startTestDaemon()).url);
    const sandbox = wireSandbox(root);
    const { permissions } = sandbox;
    if (permissions.type !== "managed" || permissions.file_system.type !== "restricted") throw new Error("unexpected profile");
    permissions.file_system.entries.push({ path: { type: "path", path: uri(secret) }, access: "deny" });
    const denied = { code: ErrorCode.InvalidRequest, message: "Permission denied (os error 13)" };
    expect(await refusal(client, "fs/readFile", { path: uri(join(secret, "kept.txt")), sandbox })).toEqual(denied);
    expect(await refusal(client, "fs/readDirectory", { path: uri(secret), sandbox })).toEqual(denied);
    expect(await refusal(client, "fs/getMetadata", { path: uri(join(secret, "kept.txt")), sandbox })).toEqual(denied);
    // Everything else reads as without a sandbox.
    expect(await client.call("fs/readFile", { path: uri(join(root, "inside.txt")), sandbox })).toEqual({ dataBase64: b64("inside\n") });
    expect(await client.call("fs/getMetadata", { path: uri(join(root, "inside.txt")), sandbox })).toMatchObject({ isFile: true, size: 7 });
    expect(await client.call("fs/canonicalize", { path: uri(join(root, ".git", "..", "inside.txt")), sandbox })).toEqual({ path: uri(join(root, "inside.txt")) });
    const listing = (await client.call("fs/readDirectory", { path: uri(root), sandbox })) as { entries: { fileName: string }[] };
    expect(listing.entries.map((entry) => entry.fileName).sort()).toEqual([".git", "inside.txt"]);
  });

  it("many at once take turns in a few helpers, and a closed connection's queued calls give their turns up", async () => {
    const root = project();
    const daemon = await startTestDaemon();
    const sandbox = wireSandbox(root);
    const write = (client: WireClient, name: string) =>
      client.request("fs/writeFile", { path: uri(join(root, name)), dataBase64: b64(name), sandbox });
    const first = await WireClient.ready(daemon.url);
    const replies = await Promise.all(Array.from({ length: 12 }, (_, index) => write(first, `many-${index}`)));
    expect(replies.filter((reply) => reply.error)).toEqual([]);
    for (let index = 0; index < 12; index++) expect(readFileSync(join(root, `many-${index}`), "utf8")).toBe(`many-${index}`);

    // A client that queues far more than the helpers can take and goes away...
    const leaving = await WireClient.ready(daemon.url);
    for (let index = 0; index < 40; index++) void write(leaving, `abandoned-${index}`).catch(() => undefined);
    leaving.close();
    // ...leaves every slot free again: the next client's calls all run.
    const next = await WireClient.ready(daemon.url);
    const after = await Promise.all(Array.from({ length: 6 }, (_, index) => write(next, `after-${index}`)));
    expect(after.filter((reply) => reply.error)).toEqual([]);
    expect(readFileSync(join(root, "after-5"), "utf8")).toBe("after-5");
  });
});
