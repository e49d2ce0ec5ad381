/**
 * File operations under a sandbox profile (what fs/* does with `sandbox`):
 * reads run directly where the profile reads the whole disk; writes run in
 * a confined helper, where no symlink, `..` or race leads outside the
 * writable roots. And what happens where no sandbox can be made.
 */
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { codexSandbox, pathToFileUri, type WireFileSystemSandboxContext } from "@execmux/shared";
import { prepareFsSandbox, readsWholeDisk, runConfined, writesWholeDisk, type PreparedFsSandbox } from "@execmux/server";
import { scratchDirectory } from "./helpers/scratch.js";

function outsideDirectory(): string {
  const directory = mkdtempSync("/var/tmp/execmux-outside-");
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** The wire form newer clients send with fs/*: cwd and roots in policyContext. */
function wireContext(root: string): WireFileSystemSandboxContext {
  const { cwd: _cwd, workspaceRoots: _roots, ...rest } = codexSandbox("workspace-write", root);
  return { ...rest, policyContext: { cwd: pathToFileUri(root), workspaceRoots: [pathToFileUri(root)] } };
}

function project(): string {
  const root = scratchDirectory("sandbox-fs");
  mkdirSync(join(root, ".git"));
  writeFileSync(join(root, ".git", "config"), "[core]\n");
  return root;
}

const writeFile = (sandbox: PreparedFsSandbox, path: string, text: string) =>
  runConfined(sandbox, { module: "node:fs/promises", exportName: "writeFile", args: [path, Buffer.from(text)] });

describe("confined file operations", () => {
  it("reads directly, writes confined under workspace-write", async () => {
    const root = project();
    const context = wireContext(root);
    expect({ reads: readsWholeDisk(context.permissions), writes: writesWholeDisk(context.permissions) }).toEqual({ reads: true, writes: false });
    const sandbox = await prepareFsSandbox(context, { hiddenPaths: [] });
    await writeFile(sandbox, join(root, "a.txt"), "inside\n");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("inside\n");
    await runConfined(sandbox, { module: "node:fs/promises", exportName: "mkdir", args: [join(root, "x/y"), { recursive: true }] });
    const read = await runConfined(sandbox, { module: "node:fs/promises", exportName: "readFile", args: [join(root, "a.txt")] });
    expect(Buffer.isBuffer(read) && read.toString()).toBe("inside\n");
  });

  it("cannot write outside, through a planted symlink, through `..`, or into .git", async () => {
    const root = project();
    const outside = outsideDirectory();
    symlinkSync(outside, join(root, "planted"));
    const sandbox = await prepareFsSandbox(wireContext(root), { hiddenPaths: [] });
    for (const path of [join(outside, "direct"), join(root, "planted", "via-link"), `${root}/../../..${outside}/dotdot`, join(root, ".git", "config")]) {
      await expect(writeFile(sandbox, path, "escaped\n"), path).rejects.toMatchObject({ code: "EROFS", syscall: "open" });
    }
    await expect(
      runConfined(sandbox, { module: "node:fs/promises", exportName: "rm", args: [join(root, ".git"), { recursive: true, force: true }] }),
      // Its files are read-only; .git itself is a mount point, so it cannot go either.
    ).rejects.toMatchObject({ code: expect.stringMatching(/^(EROFS|EBUSY)$/) });
    expect(readdirSync(outside)).toEqual([]);
    expect(readFileSync(join(root, ".git", "config"), "utf8")).toBe("[core]\n");
  });

  it("cannot be raced outside by a symlink swapped back and forth while it writes", async () => {
    const root = project();
    const outside = outsideDirectory();
    const sandbox = await prepareFsSandbox(wireContext(root), { hiddenPaths: [] });
    const flip = join(root, "flip");
    // Unconfined, as fast as it can: `flip` is a real directory, then a link to outside.
    const racer = spawn("bash", ["-c", `while :; do rm -rf '${flip}'; mkdir '${flip}'; rm -rf '${flip}'; ln -s '${outside}' '${flip}'; done`], { stdio: "ignore" });
    onTestFinished(() => void racer.kill("SIGKILL"));
    const outcomes = new Set<string>();
    const hitBothSides = () => outcomes.has("EROFS") && [...outcomes].some((outcome) => outcome === "written" || outcome === "ENOENT");
    // Until both sides of the race were hit (a loaded machine may need many tries), within a bound.
    for (let attempt = 0; attempt < 300 && !hitBothSides(); attempt++) {
      outcomes.add(await writeFile(sandbox, join(flip, "raced"), "raced\n").then(() => "written", (error: { code?: string }) => error.code ?? "error"));
    }
    racer.kill("SIGKILL");
    expect(readdirSync(outside)).toEqual([]);
    // Both sides of the race were hit: the probe really raced.
    expect(outcomes.has("EROFS")).toBe(true);
    expect([...outcomes].some((outcome) => outcome === "written" || outcome === "ENOENT")).toBe(true);
  });

  it("reads confined where the profile denies a path", async () => {
    const root = project();
    const secret = outsideDirectory();
    writeFileSync(join(secret, "key"), "secret\n");
    writeFileSync(join(root, "public"), "public\n");
    const context = wireContext(root);
    const permissions = context.permissions;
    if (permissions.type !== "managed" || permissions.file_system.type !== "restricted") throw new Error("unexpected profile");
    permissions.file_system.entries.push({ path: { type: "path", path: pathToFileUri(secret) }, access: "deny" });
    expect(readsWholeDisk(context.permissions)).toBe(false);
    const sandbox = await prepareFsSandbox(context, { hiddenPaths: [] });
    await expect(runConfined(sandbox, { module: "node:fs/promises", exportName: "readFile", args: [join(secret, "key")] })).rejects.toMatchObject({ code: "EACCES" });
    const read = await runConfined(sandbox, { module: "node:fs/promises", exportName: "readFile", args: [join(root, "public"), "utf8"] });
    expect(read).toBe("public\n");
  });

  it("refuses a profile that needs a cwd without one", async () => {
    const { cwd: _cwd, workspaceRoots: _roots, ...rest } = codexSandbox("workspace-write", "/");
    await expect(prepareFsSandbox(rest, { hiddenPaths: [] })).rejects.toMatchObject({
      code: -32602,
      message: "file system sandbox context with dynamic permissions requires cwd",
    });
  });
});

describe("where no sandbox can be made", () => {
  const availability = fileURLToPath(new URL("../server/dist/sandbox/availability.js", import.meta.url));
  /** The daemon's answer from inside a real bwrap sandbox shaped by `bwrapOptions`. */
  const probeInside = (bwrapOptions: string[]) =>
    JSON.parse(
      execFileSync("bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...bwrapOptions, "--", process.execPath, "--input-type=module", "-e",
        `const { sandboxAvailability } = await import(${JSON.stringify(availability)}); process.stdout.write(JSON.stringify(await sandboxAvailability()));`], { encoding: "utf8" }),
    ) as { available: boolean; reason?: string };

  it("says user namespaces are unavailable when they are", () => {
    const answer = probeInside(["--unshare-user", "--disable-userns", "--unshare-pid"]);
    expect(answer.available).toBe(false);
    expect(answer.reason).toMatch(/^user namespaces are unavailable on this executor, so bubblewrap cannot create a sandbox \(bwrap: .+\)$/);
  });

  it("refuses a confined fs call with -32602 saying which prerequisite is missing", () => {
    const root = project();
    const server = fileURLToPath(new URL("../server/dist/index.js", import.meta.url));
    const script = `const { prepareFsSandbox } = await import(${JSON.stringify(server)});
      const refusal = await prepareFsSandbox(${JSON.stringify(wireContext(root))}, { hiddenPaths: [] }).then(() => null, (error) => ({ code: error.code, message: error.message }));
      process.stdout.write(JSON.stringify(refusal));`;
    const refusal = JSON.parse(
      execFileSync("bwrap", ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user", "--disable-userns", "--unshare-pid", "--", process.execPath, "--input-type=module", "-e", script], {
        encoding: "utf8",
      }),
    ) as { code: number; message: string };
    expect(refusal.code).toBe(-32602);
    expect(refusal.message).toMatch(/^sandbox intent cannot be enforced on this executor: user namespaces are unavailable on this executor/);
  });

  it("says bubblewrap is not installed when it is not", () => {
    const answer = probeInside(["--unshare-user", "--unshare-pid", "--ro-bind", "/dev/null", "/usr/bin/bwrap"]);
    expect(answer).toEqual({ available: false, reason: "bubblewrap (bwrap) is not installed on this executor" });
  });
});
