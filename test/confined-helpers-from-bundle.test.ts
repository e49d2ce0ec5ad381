/**
 * The `execmux` command runs from its bundle (server/dist/cli.js), whose
 * chunks are not where tsc wrote the modules a confined helper imports
 * inside the sandbox. Each confined call must still find its module: run
 * through the real CLI under a profile that denies one directory, so the
 * call runs in a helper (the in-process daemon of other tests runs from
 * dist/ and cannot tell).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pathToFileUri } from "@execmux/shared";
import { spawnDaemon } from "./helpers/cli.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";
import { readsDisk } from "./helpers/exec-server-frames.js";

function scratchTree(): string {
  const root = scratchDirectory("confined-bundle");
  mkdirSync(join(root, "secret"));
  mkdirSync(join(root, "skills", "s"), { recursive: true });
  writeFileSync(join(root, "skills", "s", "SKILL.md"), "---\nname: s\ndescription: S.\n---\n");
  writeFileSync(join(root, "secret", "hidden.txt"), "no");
  return root;
}

const readAllBut = (denied: string, cwd: string) => ({
  permissions: readsDisk({ path: { type: "path", path: pathToFileUri(denied) }, access: "deny" }),
  policyContext: { cwd: pathToFileUri(cwd) },
  windowsSandboxLevel: "disabled",
});

describe("confined helpers of the bundled CLI", () => {
  it("fs/open and capabilityRoots/discoverV1 under a sandbox find their modules", async () => {
    const root = scratchTree();
    const sandbox = readAllBut(join(root, "secret"), root);
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { HOME: scratchDirectory("confined-bundle-home") });
    const client = await WireClient.ready(daemon.url);

    const opened = await client.request("fs/open", { handleId: "h", path: pathToFileUri(join(root, "skills", "s", "SKILL.md")), mode: "read", sandbox });
    expect(opened.error).toBeUndefined();
    expect(opened.result).toEqual({ handleId: "h" });

    const discovered = await client.request("capabilityRoots/discoverV1", { roots: [{ id: "r", path: pathToFileUri(root), sandbox }] });
    expect(discovered.result).toMatchObject({
      roots: [{ id: "r", error: null, skills: [{ instructions: { path: pathToFileUri(join(root, "skills", "s", "SKILL.md")) } }] }],
    });
    expect((discovered.result as { roots: { warnings: string[] }[] }).roots[0]!.warnings).toEqual([
      `failed to scan capability path ${pathToFileUri(join(root, "secret"))}: Permission denied (os error 13)`,
    ]);
    client.close();
  });
});
