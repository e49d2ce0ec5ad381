/**
 * The real Codex agent (`codex exec`, 0.171) with `[features]
 * executor_capability_discovery_v2` asks its executor for the executor's own
 * skills (capabilities/discoverV2, capability capabilityDiscoveryV2) and
 * puts them in the model's instructions; each executor has a skill in its
 * own $CODEX_HOME/skills. Both are asked, and the model sees the skill. (The
 * agent asks only an executor whose executorVersion is 0.164.0 or later:
 * execmux reports the upstream release whose protocol it serves,
 * shared/src/upstream-version.ts.)
 */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFailed } from "vitest";
import { spawnDaemon } from "./helpers/cli.js";
import { runCodexAgent } from "./helpers/codex-agent.js";
import { MockModel } from "./helpers/mock-model.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { startUpstreamExecServer } from "./helpers/upstream.js";
import { WsTap } from "./helpers/ws-tap.js";
import { UPSTREAM_PROTOCOL_VERSION } from "@execmux/shared";

function addExecutorSkill(home: string): void {
  mkdirSync(join(home, ".codex/skills/exec-skill"), { recursive: true });
  writeFileSync(join(home, ".codex/skills/exec-skill/SKILL.md"), "---\nname: exec-skill\ndescription: Lives on the executor.\n---\nbody\n");
}

const execServers = {
  upstream: async () => (await startUpstreamExecServer([], addExecutorSkill)).url,
  execmux: async () => {
    const home = scratchDirectory("discover-v2-agent-home");
    addExecutorSkill(home);
    return (await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { HOME: home, CODEX_HOME: join(home, ".codex") })).url;
  },
};

async function runAgent(server: keyof typeof execServers) {
  const tap = await WsTap.start(await execServers[server]());
  const model = await MockModel.start([() => ({ message: "done" })]);
  const project = realpathSync(scratchDirectory("discover-v2-agent-project"));
  const run = await runCodexAgent({ execServerUrl: tap.url, modelBaseUrl: model.baseUrl, projectDir: project, prompt: "Go.", features: { executor_capability_discovery_v2: true } });
  onTestFailed(() => console.log(`[${server}] transcript:\n${tap.transcript()}\n[agent stderr]\n${run.stderr.slice(-4000)}`));
  expect(run.exitCode).toBe(0);
  expect(model.failures).toEqual([]);
  return { tap, model, project, discoveries: tap.exchanges().filter(({ request }) => request.method === "capabilities/discoverV2") };
}

describe.each(Object.keys(execServers) as (keyof typeof execServers)[])("the Codex agent with executor_capability_discovery_v2 and %s as its environment", (server) => {
  it("discovers the executor's skills once and shows them to the model", async () => {
    const { tap, model, project, discoveries } = await runAgent(server);
    const initialized = tap.exchanges().find(({ request }) => request.method === "initialize")!;
    expect(initialized.reply?.result).toMatchObject({ environmentInfo: { capabilities: { capabilityDiscoveryV2: true } } });
    if (server === "execmux") expect(initialized.reply?.result).toMatchObject({ environmentInfo: { executorVersion: UPSTREAM_PROTOCOL_VERSION } });
    expect(discoveries).toHaveLength(1);
    expect(discoveries[0]!.request.params).toMatchObject({ cwd: `file://${project}`, sandbox: { permissions: { type: "disabled" } } });
    expect(discoveries[0]!.reply?.result).toMatchObject({ skills: [{ name: "exec-skill", discoveryRoot: { id: "codex-home-skills" } }] });
    expect(model.requests[0]!.text).toContain("Lives on the executor.");
  });
});
