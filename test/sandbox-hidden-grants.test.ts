/**
 * What the daemon hides from every sandbox (its state directory, token
 * file, TLS key) stays hidden whatever the profile asks: an entry below a
 * hidden directory, read or write, does not mount any of it back in. The
 * sandboxes really run.
 */
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { codexSandbox, pathToFileUri, type FileSystemSandboxEntry } from "@execmux/shared";
import { prepareProcessSandbox } from "@execmux/server";
import { scratchDirectory } from "./helpers/scratch.js";

const execFileAsync = promisify(execFile);
const entry = (path: string, access: FileSystemSandboxEntry["access"]): FileSystemSandboxEntry => ({ path: { type: "path", path: pathToFileUri(path) }, access });

describe("the daemon's hidden paths", () => {
  it.each(["read", "write"] as const)("stay hidden under a profile that grants %s below them", async (access) => {
    const root = scratchDirectory("hidden-grants");
    const hidden = join(root, "state");
    mkdirSync(join(hidden, "sub"), { recursive: true });
    writeFileSync(join(hidden, "sub", "token"), "daemon secret\n");
    const sandbox = await prepareProcessSandbox(
      {
        ...codexSandbox("workspace-write", root),
        permissions: {
          type: "managed",
          file_system: { type: "restricted", entries: [{ path: { type: "special", value: { kind: "root" } }, access: "read" }, entry(join(hidden, "sub"), access)] },
          network: "restricted",
        },
      },
      { processCwd: root, hiddenPaths: [hidden] },
    );
    const command = sandbox.wrap!(["cat", join(hidden, "sub", "token")]);
    const outcome = await execFileAsync(command.file, command.args, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } }).catch(
      (error: { stdout: string; stderr: string; code: number }) => error,
    );
    expect(outcome.stdout).toBe("");
    expect(outcome.stderr).toMatch(/Permission denied|No such file/);
  });
});
