/**
 * The real Codex agent in its default `workspace-write` mode, with execmux
 * as its remote environment: every command and every file write arrives
 * with Codex's permission profile and runs confined by bubblewrap. The agent
 * runs commands, edits files with apply_patch (fs/readFile, fs/writeFile,
 * fs/createDirectory with the profile) and writes files in the project; a
 * write outside fails and the model is told why. (Not side by side with the upstream exec-server here: it refuses to
 * make its sandbox helper's aliases under /tmp, where the test homes live,
 * and then cannot start `codex-linux-sandbox` at all.)
 */
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, onTestFailed, onTestFinished } from "vitest";
import { runCodexAgent } from "./helpers/codex-agent.js";
import { spawnDaemon } from "./helpers/cli.js";
import { MockModel, type ModelReply, type Turn } from "./helpers/mock-model.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WsTap } from "./helpers/ws-tap.js";

const call = (name: string, args: Record<string, unknown>): ModelReply => ({ calls: [{ name, arguments: args }] });

describe("the Codex agent in workspace-write mode with execmux", () => {
  it("applies a patch, runs commands and writes files inside the project, and cannot write outside it", async () => {
    const project = realpathSync(scratchDirectory("agent-sandbox-project"));
    writeFileSync(join(project, "greeting.txt"), "hello from the project\nsecond line stays\n");
    // Outside every writable root of the profile (/tmp is one).
    const outside = mkdtempSync("/var/tmp/execmux-agent-outside-");
    onTestFinished(() => rmSync(outside, { recursive: true, force: true }));
    // A scratch HOME, as in codex-agent.test.ts: the agent's login shells do not read this machine's profile.
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { HOME: scratchDirectory("agent-sandbox-home") });
    const tap = await WsTap.start(daemon.url);
    const patch = [
      "*** Begin Patch",
      "*** Update File: greeting.txt",
      "@@",
      "-hello from the project",
      "+hello from a sandboxed apply_patch",
      "*** Add File: notes/added.txt",
      "+added in workspace-write",
      "*** End Patch",
      "",
    ].join("\n");
    const turns: Turn[] = [
      () => ({ calls: [{ name: "apply_patch", input: patch }] }),
      () => call("exec_command", { cmd: "echo from-agent > inside.txt && mkdir -p sub && echo nested > sub/file && cat inside.txt" }),
      () => call("exec_command", { cmd: `echo escaped > ${outside}/escaped.txt` }),
      () => ({ message: "done in the sandbox" }),
    ];
    const model = await MockModel.start(turns);
    onTestFailed(() => console.log(`agent transcript:\n${tap.transcript()}`));
    const run = await runCodexAgent({
      execServerUrl: tap.url,
      modelBaseUrl: model.baseUrl,
      projectDir: project,
      prompt: "Run the scripted steps.",
      sandboxMode: "workspace-write",
    });

    expect(model.failures, run.stderr).toEqual([]);
    expect(run, run.stderr).toMatchObject({ exitCode: 0, timedOut: false });
    expect(run.stdout).toContain("done in the sandbox");
    const [patched, inside, escape] = model.toolResults;
    expect(patched!.output).toContain("Success. Updated the following files:");
    expect(patched!.output).toContain("A notes/added.txt");
    expect(patched!.output).toContain("M greeting.txt");
    expect(readFileSync(join(project, "greeting.txt"), "utf8")).toBe("hello from a sandboxed apply_patch\nsecond line stays\n");
    expect(readFileSync(join(project, "notes", "added.txt"), "utf8")).toBe("added in workspace-write\n");
    expect(inside!.output).toContain("Process exited with code 0");
    expect(inside!.output).toContain("from-agent");
    expect(readFileSync(join(project, "inside.txt"), "utf8")).toBe("from-agent\n");
    expect(readFileSync(join(project, "sub", "file"), "utf8")).toBe("nested\n");
    expect(escape!.output).toContain("Read-only file system");
    expect(readdirSync(outside)).toEqual([]);

    // Codex sent its permission profile with every start, and the server confined the process.
    const starts = tap.exchanges().filter((exchange) => exchange.request.method === "process/start");
    expect(starts.length).toBeGreaterThanOrEqual(2);
    for (const { request, reply } of starts) {
      expect(request.params).toMatchObject({ sandbox: { permissions: { type: "managed", network: "restricted" } } });
      expect(reply?.result).toMatchObject({ sandboxType: "linuxSeccomp" });
    }
    expect(tap.notifications("process/exited")).toContainEqual(expect.objectContaining({ sandboxDenied: true }));

    // The patch went over execmux as fs/* writes carrying the profile, and none was refused (a NotFound is
    // Codex's way of finding that a new file's directory is missing: it makes it and writes again).
    const writes = tap.exchanges().filter((exchange) => ["fs/writeFile", "fs/createDirectory"].includes(exchange.request.method));
    expect(writes.map(({ request }) => (request.params as { path: string }).path)).toEqual(
      expect.arrayContaining([pathToFileURL(join(project, "greeting.txt")).href, pathToFileURL(join(project, "notes", "added.txt")).href]),
    );
    for (const { request, reply } of writes) {
      expect(request.params).toMatchObject({ sandbox: { permissions: { type: "managed", file_system: { type: "restricted" } } } });
      expect([undefined, -32004]).toContain(reply?.error?.code);
    }
  });
});
