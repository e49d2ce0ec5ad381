/**
 * Streamed reads and writes under a sandbox (capability sandboxedFileStreaming):
 * a confined helper opens the file inside the sandbox and the daemon takes it
 * over while the helper holds it (methods/fs/confined-open.ts). Here: no
 * helper outlives its open, many opens at once take turns in the helper
 * slots, and a connection that closes mid-open leaves nothing behind. What
 * the opens answer is compared with upstream in upstream-differential-fs-caps.test.ts.
 */
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { startTestDaemon } from "./helpers/daemon.js";
import { readsDisk } from "./helpers/exec-server-frames.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient, unb64 } from "./helpers/wire-client.js";

/**
 * Confined helpers alive on this host that this test started: bwrap's
 * command line names both the helper and the scratch directory's binds, and
 * bwrap lives as long as the helper it runs. (Other test files run confined
 * helpers at the same time: they are not this test's to count.)
 */
function confinedHelpers(scratch: string): number[] {
  const helpers: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "latin1");
      if (commandLine.includes("confined-call-main") && commandLine.includes(scratch)) helpers.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return helpers;
}

/** Reads all but `secret`, writes only `proj`: every fs/open under it is confined. */
function sandboxFor(scratch: string) {
  return {
    permissions: readsDisk(
      { path: { type: "path", path: pathToFileURL(join(scratch, "proj")).href }, access: "write" },
      { path: { type: "path", path: pathToFileURL(join(scratch, "secret")).href }, access: "deny" },
    ),
    policyContext: { cwd: pathToFileURL(join(scratch, "proj")).href, workspaceRoots: [pathToFileURL(join(scratch, "proj")).href] },
    windowsSandboxLevel: "disabled",
    useLegacyLandlock: false,
  };
}

describe("fs/open under a sandbox", () => {
  it("many confined opens at once all work, and no helper outlives them", async () => {
    const daemon = await startTestDaemon();
    const scratch = scratchDirectory("confined-open");
    mkdirSync(join(scratch, "proj"));
    mkdirSync(join(scratch, "secret"));
    const sandbox = sandboxFor(scratch);
    for (let index = 0; index < 10; index++) writeFileSync(join(scratch, "proj", `f${index}`), `file ${index}`);
    const client = await WireClient.ready(daemon.url);
    const opened = await Promise.all(
      Array.from({ length: 10 }, (_, index) => client.call("fs/open", { handleId: `r${index}`, path: pathToFileURL(join(scratch, "proj", `f${index}`)).href, sandbox })),
    );
    expect(opened).toEqual(Array.from({ length: 10 }, (_, index) => ({ handleId: `r${index}` })));
    for (let index = 0; index < 10; index++) {
      const block = await client.call<{ chunk: string }>("fs/readBlock", { handleId: `r${index}`, offset: 0, len: 100 });
      expect(unb64(block.chunk)).toBe(`file ${index}`);
    }
    // Each helper exits once the daemon has the file: the handles stay open without them.
    await vi.waitFor(() => expect(confinedHelpers(scratch)).toEqual([]));
    const again = await client.call<{ chunk: string }>("fs/readBlock", { handleId: "r0", offset: 5, len: 1 });
    expect(unb64(again.chunk)).toBe("0");
  });

  it("a connection that closes while confined opens wait leaves no helper behind", async () => {
    const daemon = await startTestDaemon();
    const scratch = scratchDirectory("confined-open");
    mkdirSync(join(scratch, "proj"));
    mkdirSync(join(scratch, "secret"));
    writeFileSync(join(scratch, "proj", "f"), "x");
    const sandbox = sandboxFor(scratch);
    const client = await WireClient.ready(daemon.url);
    for (let index = 0; index < 12; index++) {
      client.send({ id: 100 + index, method: "fs/open", params: { handleId: `h${index}`, path: pathToFileURL(join(scratch, "proj", "f")).href, mode: "replace", sandbox } });
    }
    client.close();
    await client.closed;
    await vi.waitFor(() => expect(confinedHelpers(scratch)).toEqual([]), { timeout: 10_000 });
    // The daemon goes on serving others.
    const other = await WireClient.ready(daemon.url);
    expect(await other.call("environment/status")).toEqual({ status: "ready" });
  });
});
