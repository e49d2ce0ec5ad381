/**
 * capabilities/discoverV2 (capability capabilityDiscoveryV2) against the
 * real upstream 0.171: each server reads its own HOME, so both are given
 * the same files there before they start (upstream resolves its skill
 * locations at start) and their answers are compared with the homes
 * replaced by <home>.
 */
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ErrorCode } from "@execmux/shared";
import { compareVersions } from "../server/src/methods/capabilities/executor-capabilities.js";
import { spawnDaemon } from "./helpers/cli.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { startUpstreamExecServer } from "./helpers/upstream.js";
import { WireClient } from "./helpers/wire-client.js";

const skill = (name: string, description?: string, extra = "") =>
  `---\nname: ${name}\n${description === undefined ? "" : `description: ${description}\n`}${extra}---\nBody of ${name}.\n`;

const PLUGINS = ".codex/plugins/cache/market";
const HOME_FILES: Record<string, string> = {
  [`${PLUGINS}/demo/1.0.0/.codex-plugin/plugin.json`]: '{"name":"demo","interface":{"displayName":"Demo Plugin"},"mcpServers":"./mcp.json"}',
  [`${PLUGINS}/demo/1.0.0/mcp.json`]: '{"mcpServers":{}}',
  [`${PLUGINS}/demo/1.0.0/skills/b/SKILL.md`]: skill("bee", "B.", "metadata:\n  short-description: short b\n"),
  [`${PLUGINS}/demo/1.0.0/skills/a/SKILL.md`]: skill("a", "A."),
  [`${PLUGINS}/versions/2.0.0/.codex-plugin/plugin.json`]: '{"name":"versions"}',
  [`${PLUGINS}/versions/10.0.0/.codex-plugin/plugin.json`]: '{"name":"versions"}',
  [`${PLUGINS}/dirname/1.0.0/.codex-plugin/plugin.json`]: '{"name":"manifest-name"}',
  [`${PLUGINS}/dirname/1.0.0/skills/s/SKILL.md`]: skill("s", "Named after the manifest or the directory?"),
  [`${PLUGINS}/claude/local/.claude-plugin/plugin.json`]: '{"name":"claude"}',
  ".codex/plugins/cache/other/zeta/1/.codex-plugin/plugin.json": '{"name":"zeta"}',
  ".codex/config.toml": '[plugins."demo@market"]\nenabled = false\n',
  ".codex/skills/alpha/SKILL.md": skill("alpha", "Alpha skill."),
  ".codex/skills/alpha/agents/openai.yaml":
    "policy:\n  allow_implicit_invocation: false\n  products: [codex]\ndependencies:\n  tools:\n    - type: mcp\n      value: github\n      description: GitHub\n      transport: streamable_http\n      url: https://example.com/mcp\n    - type: env_var\n      value: TOKEN\n",
  ".codex/skills/policy-only/SKILL.md": skill("policy-only", "Policy only."),
  ".codex/skills/policy-only/agents/openai.yaml": "policy:\n  allow_implicit_invocation: true\n",
  ".codex/skills/y/SKILL.md": skill("other-name", "Named apart from its directory."),
  ".codex/skills/q/SKILL.md": skill("q", '"Quoted: yes"'),
  ".codex/skills/.hidden/z/SKILL.md": skill("z", "In a hidden directory."),
  ".codex/skills/1/2/3/4/5/d6/SKILL.md": skill("d6", "Six deep."),
  ".codex/skills/1/2/3/4/5/6/d7/SKILL.md": skill("d7", "Seven deep."),
  ".agents/skills/u/SKILL.md": skill("u", "A user agent skill."),
};

function fill(home: string, files: Record<string, string>): void {
  for (const [name, contents] of Object.entries(files)) {
    mkdirSync(join(home, name, ".."), { recursive: true });
    writeFileSync(join(home, name), contents);
  }
}

/** Both servers, each with `files` in its HOME; the replies to `requests`, homes replaced by <home>. */
async function askBoth(files: Record<string, string>, requests: { method: string; params: unknown }[], more?: (home: string) => void) {
  const upstream = await startUpstreamExecServer([], (home) => {
    fill(home, files);
    more?.(home);
  });
  const home = scratchDirectory("discover-v2-home");
  fill(home, files);
  more?.(home);
  const execmux = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "warn"], { HOME: home, CODEX_HOME: join(home, ".codex") });
  const replies: Record<string, unknown[]> = {};
  for (const [name, url, serverHome] of [["upstream", upstream.url, upstream.home], ["execmux", execmux.url, home]] as const) {
    const client = await WireClient.ready(url);
    replies[name] = [];
    for (const { method, params } of requests) {
      const reply = await client.request(method, params);
      // Upstream reports its home's real path (the checkout's .cache may be a symlink).
      const json = JSON.stringify({ result: reply.result, error: reply.error }).replaceAll(realpathSync(serverHome), "<home>").replaceAll(serverHome, "<home>");
      replies[name].push(JSON.parse(json));
    }
    client.close();
  }
  return replies as { upstream: unknown[]; execmux: unknown[] };
}

describe("capabilities/discoverV2 against upstream 0.171", () => {
  it("the installed plugins (highest version, whatever config.toml enables) and the skills of both locations", async () => {
    const { upstream, execmux } = await askBoth(HOME_FILES, [{ method: "capabilities/discoverV2", params: { cwd: "file:///tmp" } }]);
    expect(execmux).toEqual(upstream);
    // What the comparison rests on, so an empty answer on both sides cannot pass.
    expect(upstream[0]).toMatchObject({ result: { plugins: expect.arrayContaining([expect.objectContaining({ id: "demo@market" })]) } });
  }, 60_000);

  it("plugins without a manifest, skills without a description: left out, with one warning per plugin and per skill location; a skill without a name named after its directory", async () => {
    const files = {
      [`${PLUGINS}/bare/1.0.0/skills/s/SKILL.md`]: skill("s", "S."),
      [`${PLUGINS}/bare2/1.0.0/skills/s/SKILL.md`]: skill("s", "S."),
      [`${PLUGINS}/half/1/.codex-plugin/plugin.json`]: '{"name":"half"}',
      [`${PLUGINS}/half/1/skills/bad/SKILL.md`]: skill("bad"),
      [`${PLUGINS}/half/1/skills/bad2/SKILL.md`]: skill("bad2"),
      [`${PLUGINS}/half/1/skills/good/SKILL.md`]: skill("good", "Good."),
      ".agents/skills/bad/SKILL.md": skill("bad"),
      ".codex/skills/nodesc/SKILL.md": skill("nodesc"),
      ".codex/skills/nofront/SKILL.md": "no front matter\n",
      ".codex/skills/noname/SKILL.md": "---\ndescription: No name.\n---\n",
      ".codex/skills/ok/SKILL.md": skill("ok", "OK."),
    };
    const { upstream, execmux } = await askBoth(files, [{ method: "capabilities/discoverV2", params: { cwd: "file:///tmp" } }]);
    expect(execmux).toEqual(upstream);
    expect((upstream[0] as { result: { warnings: string[] } }).result.warnings).toEqual(Array(5).fill("some capability metadata could not be loaded; discovery may be incomplete"));
  }, 60_000);

  it("odd files: a manifest without a name, broken metadata, CRLF front matter, a symlinked skill directory", async () => {
    const files = {
      [`${PLUGINS}/unnamed/1/.codex-plugin/plugin.json`]: '{"interface":{}}',
      [`${PLUGINS}/unnamed/1/skills/s/SKILL.md`]: skill("s", "S."),
      ".codex/skills/brokenyaml/SKILL.md": skill("brokenyaml", "Broken metadata."),
      ".codex/skills/brokenyaml/agents/openai.yaml": "policy: [unclosed\n",
      ".codex/skills/notools/SKILL.md": skill("notools", "No tools."),
      ".codex/skills/notools/agents/openai.yaml": "dependencies: {}\n",
      ".codex/skills/productstext/SKILL.md": skill("productstext", "Products as text."),
      ".codex/skills/productstext/agents/openai.yaml": "policy:\n  products: codex\ndependencies:\n  tools: []\n",
      ".codex/skills/tooltypes/SKILL.md": skill("tooltypes", "A tool without a value."),
      ".codex/skills/tooltypes/agents/openai.yaml": "dependencies:\n  tools:\n    - type: mcp\n    - type: env_var\n      value: X\n",
      ".codex/skills/emptytools/SKILL.md": skill("emptytools", "No tools, an empty policy."),
      ".codex/skills/emptytools/agents/openai.yaml": "dependencies:\n  tools: []\npolicy: {}\n",
      ".codex/skills/badproduct/SKILL.md": skill("badproduct", "A product that is a number."),
      ".codex/skills/badproduct/agents/openai.yaml": "policy:\n  allow_implicit_invocation: true\n  products: [a, 5]\n",
      ".codex/skills/crlf/SKILL.md": "---\r\nname: crlf\r\ndescription: CRLF.\r\n---\r\nBody.\r\n",
      ".codex/skills/shortnum/SKILL.md": skill("shortnum", "Short is a number.", "metadata:\n  short-description: 5\n"),
      "elsewhere/linked/SKILL.md": skill("linked", "Through a symlink."),
    };
    const link = (home: string) => symlinkSync(join(home, "elsewhere/linked"), join(home, ".codex/skills/link"));
    const { upstream, execmux } = await askBoth(files, [{ method: "capabilities/discoverV2", params: { cwd: "file:///tmp" } }], link);
    expect(execmux).toEqual(upstream);
  }, 60_000);

  it("params upstream refuses, and the agent's sandbox", async () => {
    const agentSandbox = { permissions: { type: "disabled" }, cwd: "file:///tmp", workspaceRoots: ["file:///tmp"], windowsSandboxLevel: "disabled", useLegacyLandlock: false };
    const { upstream, execmux } = await askBoth({ ".codex/skills/ok/SKILL.md": skill("ok", "OK.") }, [
      { method: "capabilities/discoverV2", params: {} },
      { method: "capabilities/discoverV2", params: null },
      { method: "capabilities/discoverV2", params: { cwd: "relative" } },
      { method: "capabilities/discoverV2", params: { cwd: "file:///tmp", sandbox: { permissions: { type: "disabled" }, windowsSandboxLevel: "disabled" } } },
      { method: "capabilities/discoverV2", params: { cwd: "file:///tmp", sandbox: agentSandbox } },
    ]);
    expect(execmux).toEqual(upstream);
  }, 60_000);
});

describe("capabilities/discoverV2's own rules", () => {
  it("refuses a profile narrower than reading the whole disk, and past the client's descriptors", async () => {
    const daemon = await startTestDaemon({ maxDescriptorsPerClient: 1 });
    const client = await WireClient.ready(daemon.url);
    const narrow = {
      permissions: {
        type: "managed",
        file_system: { type: "restricted", entries: [{ path: { type: "special", value: { kind: "root" } }, access: "read" }, { path: { type: "path", path: "file:///tmp/denied" }, access: "deny" }] },
        network: "restricted",
      },
      cwd: "file:///tmp",
      windowsSandboxLevel: "disabled",
    };
    const refused = await client.request("capabilities/discoverV2", { cwd: "file:///tmp", sandbox: narrow });
    expect(refused.error).toEqual({
      code: ErrorCode.InvalidParams,
      message: "capabilities/discoverV2 under a profile that does not read the whole disk is not supported by execmux",
    });
    // The connection holds the client's one descriptor: a discovery cannot have another.
    const busy = await client.request("capabilities/discoverV2", { cwd: "file:///tmp" });
    expect(busy.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "maxDescriptorsPerClient" } });
    client.close();
  });

  it("takes the highest version of a plugin by number, not by text", () => {
    expect(["2.0.0", "10.0.0", "9.1", "1.0.0-beta"].sort(compareVersions)).toEqual(["1.0.0-beta", "2.0.0", "9.1", "10.0.0"]);
  });
});
