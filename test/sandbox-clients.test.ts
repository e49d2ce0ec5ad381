/** The SDK and the CLI ask for the same confinement as Codex's modes. */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { connect } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";
import { runCli } from "./helpers/cli.js";
import { scratchDirectory } from "./helpers/scratch.js";

function outsideDirectory(): string {
  const directory = mkdtempSync("/var/tmp/execmux-outside-");
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

const decode = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString("utf8");

describe("sandbox from the clients", () => {
  it("SDK: start({ sandbox: 'workspace-write' }) writes the project and nothing else", async () => {
    const daemon = await startTestDaemon();
    const root = scratchDirectory("sandbox-sdk");
    const outside = outsideDirectory();
    const client = await connect(daemon.url);
    onTestFinished(() => client.close());
    const handle = await client.start({
      argv: ["bash", "--noprofile", "--norc", "-c", `echo in > inside.txt; echo out > ${outside}/escaped.txt`],
      cwd: root,
      sandbox: "workspace-write",
    });
    const output: Uint8Array[] = [];
    handle.onOutput((event) => output.push(event.data));
    expect(handle.sandboxType).toBe("linuxSeccomp");
    expect(await handle.wait()).toBe(1);
    expect(decode(output)).toContain("Read-only file system");
    expect(readFileSync(join(root, "inside.txt"), "utf8")).toBe("in\n");
    expect(readdirSync(outside)).toEqual([]);
    await expect(client.start({ argv: ["true"], sandbox: "workspace-write" })).rejects.toThrow('sandbox "workspace-write" needs a cwd');
  });

  it("CLI: execmux exec --sandbox read-only refuses writes even to /tmp", async () => {
    const daemon = await startTestDaemon();
    const root = scratchDirectory("sandbox-cli");
    const result = await runCli(["exec", "--url", daemon.url, "--sandbox", "read-only", "--cwd", root, "--", "bash", "-c", "cat /etc/hostname >/dev/null && echo read-ok; echo x > f"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("read-ok\n");
    expect(result.stderr).toContain("Read-only file system");
    expect(readdirSync(root)).toEqual([]);
  });

  it("CLI: --sandbox workspace-write needs a project (never /), and an unknown mode is refused", async () => {
    const daemon = await startTestDaemon();
    const missingCwd = await runCli(["exec", "--url", daemon.url, "--sandbox", "workspace-write", "--cwd", "/", "--", "true"]);
    expect(missingCwd.code).toBe(2);
    expect(missingCwd.stderr).toContain("--sandbox workspace-write needs --cwd DIR");
    const unknown = await runCli(["exec", "--url", daemon.url, "--sandbox", "danger", "--", "true"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--sandbox takes read-only or workspace-write, got danger");
  });
});
