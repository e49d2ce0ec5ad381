/**
 * How a profile becomes a sandbox: which profiles need none, which are
 * refused (-32602, naming the entry) because bubblewrap cannot enforce them
 * exactly, and that nested rules mount in the order the profile means.
 * Everything against real directories; the sandboxes really run.
 */
import { execFile } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { codexSandbox, pathToFileUri, type FileSystemSandboxContext, type FileSystemSandboxEntry, type PermissionProfile } from "@execmux/shared";
import { prepareProcessSandbox, sandboxSupport } from "@execmux/server";
import { scratchDirectory } from "./helpers/scratch.js";

const execFileAsync = promisify(execFile);

const context = (root: string, permissions: PermissionProfile): FileSystemSandboxContext => ({ ...codexSandbox("workspace-write", root), permissions });
const restricted = (entries: FileSystemSandboxEntry[], network: "restricted" | "enabled" = "restricted"): PermissionProfile => ({
  type: "managed",
  file_system: { type: "restricted", entries },
  network,
});
const rootRead: FileSystemSandboxEntry = { path: { type: "special", value: { kind: "root" } }, access: "read" };
const write = (path: string): FileSystemSandboxEntry => ({ path: { type: "path", path: pathToFileUri(path) }, access: "write" });

async function runIn(sandbox: Awaited<ReturnType<typeof prepareProcessSandbox>>, script: string): Promise<string> {
  const command = sandbox.wrap!(["bash", "--noprofile", "--norc", "-c", script]);
  const { stdout, stderr } = await execFileAsync(command.file, command.args, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } }).catch(
    (error: { stdout: string; stderr: string }) => error,
  );
  return stdout + stderr;
}

describe("sandbox policy", () => {
  it("needs no sandbox for profiles that restrict nothing, and isolates the network alone where only it is restricted", async () => {
    const root = scratchDirectory("policy");
    const options = { processCwd: root, hiddenPaths: [] };
    expect((await prepareProcessSandbox(context(root, { type: "disabled" }), options)).sandboxType).toBe("none");
    expect((await prepareProcessSandbox(context(root, { type: "external", network: "enabled" }), options)).sandboxType).toBe("none");
    const networkOnly = await prepareProcessSandbox(context(root, { type: "managed", file_system: { type: "unrestricted" }, network: "restricted" }), options);
    expect(networkOnly.sandboxType).toBe("linuxSeccomp");
    const output = await runIn(networkOnly, `touch ${root}/../policy-written && rm ${root}/../policy-written && echo wrote; wc -l < /proc/net/dev`);
    // Writable everywhere, and only the loopback interface (two header lines + lo).
    expect(output).toBe("wrote\n3\n");
  });

  it("reports what environment/info should say", async () => {
    expect(await sandboxSupport()).toEqual({ sandboxType: "linuxSeccomp" });
  });

  it("mounts nested rules so that the most specific one wins", async () => {
    const root = scratchDirectory("policy");
    mkdirSync(join(root, "hidden/granted"), { recursive: true });
    mkdirSync(join(root, "ro/rw"), { recursive: true });
    writeFileSync(join(root, "hidden/secret"), "secret\n");
    const sandbox = await prepareProcessSandbox(
      context(
        root,
        restricted([
          rootRead,
          write(root),
          { path: { type: "path", path: pathToFileUri(join(root, "hidden")) }, access: "deny" },
          write(join(root, "hidden/granted")),
          { path: { type: "path", path: pathToFileUri(join(root, "ro")) }, access: "read" },
          write(join(root, "ro/rw")),
        ]),
      ),
      { processCwd: root, hiddenPaths: [] },
    );
    const output = await runIn(
      sandbox,
      "cat hidden/secret; ls hidden; echo a > hidden/granted/a && echo granted-ok; echo b > ro/b; echo c > ro/rw/c && echo rw-ok; echo d > d && echo root-ok",
    );
    // Denied, but traversable to reach the grant inside: an empty directory nobody may list.
    expect(output).toContain("hidden/secret: No such file or directory");
    expect(output).toContain("cannot open directory 'hidden': Permission denied");
    expect(output).toContain("granted-ok");
    expect(output).toContain("ro/b: Read-only file system");
    expect(output).toContain("rw-ok");
    expect(output).toContain("root-ok");
  });

  it("skips missing writable roots, and missing read-only paths with `skip`", async () => {
    const root = scratchDirectory("policy");
    const sandbox = await prepareProcessSandbox(context(root, restricted([rootRead, write(root), write(join(root, "../no-such-root"))])), { processCwd: root, hiddenPaths: [] });
    expect(sandbox.sandboxType).toBe("linuxSeccomp");
    // Codex's profile names .git, .agents, .codex, .aws with skip; none exists here.
    expect((await prepareProcessSandbox(codexSandbox("workspace-write", root), { processCwd: root, hiddenPaths: [] })).sandboxType).toBe("linuxSeccomp");
  });

  const refusals: [string, (root: string) => FileSystemSandboxContext, RegExp][] = [
    [
      "a missing read-only path it could create, without skip",
      (root) => context(root, restricted([rootRead, write(root), { path: { type: "special", value: { kind: "project_roots", subpath: ".git" } }, access: "read" }])),
      /^sandbox entry 2 \(\{"type":"special","value":\{"kind":"project_roots","subpath":".git"\}\} read\): .*\/\.git does not exist and could be created inside a writable root$/,
    ],
    [
      "a read-only path reached through a symlink it may rewrite",
      (root) => {
        mkdirSync(join(root, "real"));
        symlinkSync(join(root, "real"), join(root, "link"));
        return context(root, restricted([rootRead, write(root), { path: { type: "path", path: pathToFileUri(join(root, "link")) }, access: "read" }]));
      },
      /^sandbox entry 2 .*: cannot enforce it because its path crosses the symlink .*\/link, which the sandbox may rewrite$/,
    ],
    [
      "a profile without full-disk read",
      (root) => context(root, restricted([write(root)])),
      /^sandbox profiles without full-disk read .* are not supported/,
    ],
    [
      "an unknown special path that restricts",
      (root) => context(root, restricted([rootRead, write(root), { path: { type: "special", value: { kind: "unknown", path: ":future" } }, access: "deny" }])),
      /^sandbox entry 2 .*: unknown special path `:future` cannot be enforced/,
    ],
    [
      "a project subpath that leaves the project",
      (root) => context(root, restricted([rootRead, { path: { type: "special", value: { kind: "project_roots", subpath: "../x" } }, access: "write" }])),
      /^sandbox entry 1 .*: subpath must stay inside the project roots$/,
    ],
    [
      "a path that is not absolute",
      (root) => context(root, restricted([rootRead, { path: { type: "path", path: "relative/x" }, access: "write" }])),
      /^invalid sandbox permission path URI: sandbox entry 1 .* is not an absolute path$/,
    ],
  ];
  for (const [what, make, message] of refusals) {
    it(`refuses ${what}`, async () => {
      const root = scratchDirectory("policy");
      await expect(prepareProcessSandbox(make(root), { processCwd: root, hiddenPaths: [] })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(message) });
    });
  }

  it("refuses a managed network proxy it cannot route to, and fails closed without one", async () => {
    const root = scratchDirectory("policy");
    await expect(prepareProcessSandbox(codexSandbox("workspace-write", root), { processCwd: root, hiddenPaths: [], managedNetwork: true })).rejects.toMatchObject({
      code: -32602,
      message: "managed network proxy routing cannot be enforced by this executor's sandbox",
    });
    const open = await prepareProcessSandbox(context(root, { type: "external", network: "enabled" }), { processCwd: root, hiddenPaths: [], enforceManagedNetwork: true });
    expect(open.policy.isolateNetwork).toBe(true);
  });
});
