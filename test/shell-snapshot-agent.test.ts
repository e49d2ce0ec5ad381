/**
 * The real Codex agent with `[features] shell_snapshot_v2 = true`, against
 * the upstream exec-server and execmux alike: an executor that reports
 * shellSnapshotV2 gets `shellSnapshot {scopeId: "<thread>:<environment>",
 * shell}` with each `-lc` command, and the second command runs from the
 * capture the first made: the function the server's ~/.bashrc defines is
 * there, the profile (which counts its runs) ran once, for the capture, and
 * printed nothing into either command's output. In the default mode and in
 * workspace-write, where the capture runs in the sandbox too.
 */
import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFailed } from "vitest";
import { runCodexAgent, type SandboxMode } from "./helpers/codex-agent.js";
import { spawnDaemon } from "./helpers/cli.js";
import { MockModel, type Turn } from "./helpers/mock-model.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { startUpstreamExecServer } from "./helpers/upstream.js";
import { WsTap } from "./helpers/ws-tap.js";

/** Each server with a HOME of its own (its processes inherit it): its URL and that HOME. */
const execServers = {
  upstream: async () => {
    const server = await startUpstreamExecServer();
    return { url: server.url, home: server.home };
  },
  execmux: async () => {
    const home = realpathSync(scratchDirectory("agent-snapshot-home"));
    return { url: (await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { HOME: home })).url, home };
  },
};

/** The profile counts its runs in a file the project can read (in workspace-write, HOME is read-only). */
function writeProfile(home: string, countFile: string): void {
  writeFileSync(join(home, ".profile"), [`echo "profile ran"`, `echo x >> ${JSON.stringify(countFile)}`, `. "$HOME/.bashrc"`, ""].join("\n"));
  writeFileSync(join(home, ".bashrc"), [`greet() { echo "greet from the profile: $1"; }`, ""].join("\n"));
}

const COMMAND = (n: number) => `greet ${n}; echo "profile runs: $(wc -l < profile-count)"`;

describe.each(Object.keys(execServers) as (keyof typeof execServers)[])("the Codex agent with shell_snapshot_v2 and %s as its environment", (server) => {
  it.each(["danger-full-access", "workspace-write"] as SandboxMode[])("reads the login profile once and runs later commands from the snapshot (%s)", async (sandboxMode) => {
    const { url, home } = await execServers[server]();
    const project = realpathSync(scratchDirectory("agent-snapshot-project"));
    writeProfile(home, join(project, "profile-count"));
    const tap = await WsTap.start(url);
    const turns: Turn[] = [
      () => ({ calls: [{ name: "exec_command", arguments: { cmd: COMMAND(1) } }] }),
      () => ({ calls: [{ name: "exec_command", arguments: { cmd: COMMAND(2) } }] }),
      () => ({ message: "snapshots used" }),
    ];
    const model = await MockModel.start(turns);
    onTestFailed(() => console.log(`[${server}] transcript:\n${tap.transcript()}`));
    const run = await runCodexAgent({
      execServerUrl: tap.url,
      modelBaseUrl: model.baseUrl,
      projectDir: project,
      prompt: "Greet twice.",
      sandboxMode,
      features: { shell_snapshot_v2: true },
    });

    expect(model.failures, run.stderr).toEqual([]);
    expect(run, run.stderr).toMatchObject({ exitCode: 0, timedOut: false });
    const [first, second] = model.toolResults;
    expect(first!.output).toContain("greet from the profile: 1\nprofile runs: 1");
    expect(second!.output).toContain("greet from the profile: 2\nprofile runs: 1");
    for (const result of [first!, second!]) expect(result.output).not.toContain("profile ran");

    const starts = tap.requestsFor("process/start") as { argv: string[]; shellSnapshot?: { scopeId: string; shell: unknown } }[];
    expect(starts).toHaveLength(2);
    for (const start of starts) {
      expect(start.argv.slice(1, 2)).toEqual(["-lc"]);
      expect(start.shellSnapshot).toEqual({ scopeId: expect.stringMatching(/^[0-9a-f-]{36}:[^:]+$/), shell: { name: "bash", path: start.argv[0] } });
    }
    expect(starts[1]!.shellSnapshot).toEqual(starts[0]!.shellSnapshot);
  });
});
