/**
 * The real Codex agent in its default `workspace-write` mode, with execmux
 * as its remote environment: every command arrives with Codex's permission
 * profile and runs confined by bubblewrap. The agent runs commands and
 * writes files in the project; a write outside fails and the model is told
 * why. (Not side by side with the upstream exec-server here: it refuses to
 * make its sandbox helper's aliases under /tmp, where the test homes live,
 * and then cannot start `codex-linux-sandbox` at all.)
 */
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFailed, onTestFinished } from "vitest";
import { runCodexAgent } from "./helpers/codex-agent.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { MockModel, type ModelReply, type Turn } from "./helpers/mock-model.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WsTap } from "./helpers/ws-tap.js";

const call = (name: string, args: Record<string, unknown>): ModelReply => ({ calls: [{ name, arguments: args }] });

describe("the Codex agent in workspace-write mode with execmux", () => {
  it("runs commands and writes files inside the project, and cannot write outside it", async () => {
    const project = realpathSync(scratchDirectory("agent-sandbox-project"));
    // Outside every writable root of the profile (/tmp is one).
    const outside = mkdtempSync("/var/tmp/execmux-agent-outside-");
    onTestFinished(() => rmSync(outside, { recursive: true, force: true }));
    const tap = await WsTap.start((await startTestDaemon()).url);
    const turns: Turn[] = [
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
    const [inside, escape] = model.toolResults;
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
  });
});
