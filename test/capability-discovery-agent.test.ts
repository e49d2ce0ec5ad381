/**
 * The real Codex agent discovers a plugin's skills on its executor with
 * capabilityRoots/discoverV1, against the upstream exec-server and execmux
 * alike. An IDE's thread names the plugin root (the app-server's
 * experimental `selectedCapabilityRoots`); the agent's permission profile
 * denies one directory, so it no longer reads the whole disk and the agent
 * sends each root with its sandbox (capability capabilityDiscoverySandbox:
 * without it the agent refuses, "exec-server does not support sandboxed
 * capability discovery"). The executor discovers inside the sandbox: the
 * plugin's skill reaches the model, the one in the denied directory does
 * not. With the whole disk readable, `[features] executor_capability_discovery`
 * asks for the same discovery without a sandbox.
 */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFailed } from "vitest";
import type { AgentHomeOptions } from "./helpers/codex-agent.js";
import { CodexAppServer } from "./helpers/codex-app-server.js";
import { spawnDaemon } from "./helpers/cli.js";
import { MockModel } from "./helpers/mock-model.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { startUpstreamExecServer } from "./helpers/upstream.js";
import { WsTap } from "./helpers/ws-tap.js";

const execServers = {
  upstream: async () => (await startUpstreamExecServer()).url,
  execmux: async () => (await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { HOME: scratchDirectory("discovery-agent-home") })).url,
};

/** A project with a plugin in it: one skill readable, one in a directory the profile will deny. */
function projectWithPlugin(): { project: string; plugin: string; denied: string } {
  const project = realpathSync(scratchDirectory("discovery-agent-project"));
  const plugin = join(project, "myplugin");
  const files: Record<string, string> = {
    ".codex-plugin/plugin.json": JSON.stringify({ name: "myplugin", version: "1.0.0", description: "A test plugin." }),
    "skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys the test service.\n---\nRun the deploy script.\n",
    "private/skills/leak/SKILL.md": "---\nname: leak\ndescription: Must stay unseen.\n---\nSecret.\n",
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(plugin, name, ".."), { recursive: true });
    writeFileSync(join(plugin, name), text);
  }
  return { project, plugin, denied: join(plugin, "private") };
}

async function runThread(server: keyof typeof execServers, home: (paths: ReturnType<typeof projectWithPlugin>) => Omit<AgentHomeOptions, "execServerUrl" | "modelBaseUrl">) {
  const tap = await WsTap.start(await execServers[server]());
  const model = await MockModel.start([() => ({ message: "done" })]);
  const paths = projectWithPlugin();
  const agent = await CodexAppServer.start({ execServerUrl: tap.url, modelBaseUrl: model.baseUrl, ...home(paths) });
  onTestFailed(() => console.log(`[${server}] transcript:\n${tap.transcript()}\n[app-server stderr]\n${agent.stderr.slice(-4000)}`));
  const roots = [{ id: "root-1", location: { type: "environment", environmentId: "remote", path: paths.plugin } }];
  const started = await agent.request("thread/start", { cwd: paths.project, selectedCapabilityRoots: roots });
  expect(started.error).toBeUndefined();
  const threadId = (started.result!["thread"] as { id: string }).id;
  expect((await agent.request("turn/start", { threadId, input: [{ type: "text", text: "hi" }] })).error).toBeUndefined();
  await agent.notification("turn/completed", (params) => params["threadId"] === threadId);
  return { tap, model, paths };
}

describe.each(Object.keys(execServers) as (keyof typeof execServers)[])("the Codex agent discovering a selected plugin root on %s", (server) => {
  it("under a profile that denies a directory: sandboxed discovery, the denied skill unseen", async () => {
    const { tap, model, paths } = await runThread(server, ({ denied }) => ({
      defaultPermissions: "restricted",
      configTables: [`[permissions.restricted]`, `extends = ":workspace"`, `[permissions.restricted.filesystem]`, `${JSON.stringify(denied)} = "none"`],
    }));

    expect(model.failures).toEqual([]);
    const [discovery] = tap.exchanges().filter(({ request }) => request.method === "capabilityRoots/discoverV1");
    expect(discovery!.request.params).toMatchObject({
      roots: [{ id: "root-1", path: `file://${paths.plugin}`, sandbox: { permissions: { type: "managed" } } }],
    });
    expect(discovery!.reply?.result).toMatchObject({
      roots: [{ id: "root-1", error: null, warnings: [`failed to scan capability path file://${paths.denied}: Permission denied (os error 13)`] }],
    });
    const instructions = model.requests[0]!.text;
    expect(instructions).toContain("myplugin:deploy: Deploys the test service.");
    expect(instructions).not.toContain("Must stay unseen");
  });

  it("with executor_capability_discovery on and the whole disk readable: one discovery, no sandbox", async () => {
    const { tap, model } = await runThread(server, () => ({ features: { executor_capability_discovery: true } }));

    expect(model.failures).toEqual([]);
    expect(tap.requestsFor("capabilityRoots/discoverV1")).toEqual([{ roots: [expect.objectContaining({ id: "root-1", sandbox: null })] }]);
    const instructions = model.requests[0]!.text;
    expect(instructions).toContain("myplugin:deploy: Deploys the test service.");
    expect(instructions).toContain("myplugin:leak: Must stay unseen.");
  });
});
