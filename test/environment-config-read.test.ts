/**
 * environmentConfig/read (capability environmentConfigRead) against the real
 * upstream: each scenario writes the same Codex config into both servers'
 * Codex homes (upstream's scratch HOME, and a CODEX_HOME for execmux, which
 * runs in this process), asks both the same, and compares the answers with
 * the homes named alike. The TOML each layer carries is compared as the
 * document it is (execmux's serializer spaces arrays differently), and as
 * text where it has no arrays. Upstream's answers are described in
 * docs/upstream-capabilities.md.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { launchTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { launchUpstreamExecServer, type UpstreamServer } from "./helpers/upstream.js";
import { WireClient } from "./helpers/wire-client.js";
import type { Daemon } from "@execmux/server";

let upstream: UpstreamServer;
let daemon: Daemon;
let execmuxCodexHome: string;

beforeAll(async () => {
  [upstream, daemon] = await Promise.all([launchUpstreamExecServer(), launchTestDaemon()]);
});
afterAll(async () => {
  upstream?.stop();
  await daemon?.close();
});

interface Scenario {
  /** The user's config.toml (`<projects>` stands for the project tree's directory), or none. */
  readonly userConfig?: string;
  /** Relative to the project tree. */
  readonly cwd: string;
  readonly configPaths: string[][];
  readonly requirementsPaths?: string[][];
}

/** A tree of projects both servers read: a plain directory and a Git repository, each with .codex/config.toml files. */
function projectTree(): string {
  const root = realpathSync(scratchDirectory("config-projects"));
  for (const directory of ["plain/.codex", "repo/.codex", "repo/sub/.codex"]) mkdirSync(join(root, directory), { recursive: true });
  execFileSync("git", ["init", "-q", join(root, "repo")]);
  writeFileSync(join(root, "plain/.codex/config.toml"), '[mcp_servers.p]\ncommand = "p"\n');
  writeFileSync(join(root, "repo/.codex/config.toml"), '[mcp_servers.r]\ncommand = "r"\nmodel = "not asked for"\n');
  writeFileSync(join(root, "repo/sub/.codex/config.toml"), '[mcp_servers.s]\ncommand = "s"\n');
  return root;
}

async function ask(url: string, codexHome: string, projects: string, scenario: Scenario): Promise<unknown> {
  rmSync(join(codexHome, "config.toml"), { force: true });
  mkdirSync(codexHome, { recursive: true });
  if (scenario.userConfig !== undefined) writeFileSync(join(codexHome, "config.toml"), scenario.userConfig.replaceAll("<projects>", projects));
  const client = await WireClient.ready(url);
  try {
    const reply = await client.request("environmentConfig/read", {
      cwd: pathToFileURL(join(projects, scenario.cwd)).href,
      configPaths: scenario.configPaths,
      requirementsPaths: scenario.requirementsPaths ?? [["mcp_servers"]],
    });
    return reply.error ?? reply.result;
  } finally {
    client.close();
  }
}

/** Homes and hosts named alike; each layer's TOML as its document, and as text where arrays do not differ in spacing. */
function comparable(answer: unknown, codexHome: string, userHome: string): unknown {
  const text = JSON.stringify(answer).replaceAll(codexHome, "<codex-home>").replaceAll(userHome, "<user-home>");
  return JSON.parse(text, (key, value: unknown) => {
    if (key !== "toml" || typeof value !== "string") return value;
    return { document: parse(value), ...(value.includes("[") && value.includes("= [") ? {} : { text: value }) };
  });
}

const SERVERS = '[mcp_servers.z]\ncommand = "z"\nargs = ["a", "b"]\nenabled = true\nstartup_timeout_sec = 5\n[mcp_servers.z.env]\nK = "v"\n[mcp_servers.y]\nurl = "http://y"\nhttp_headers = { A = "b" }\n';
const TRUST = (path: string) => `[projects."<projects>/${path}"]\ntrust_level = "trusted"\n`;

const scenarios: Record<string, Scenario> = {
  "no config at all (what a fresh host has)": { cwd: "plain", configPaths: [["mcp_servers"]] },
  "the user's MCP servers, tables, inline tables and all": { userConfig: `model = "m"\n${SERVERS}`, cwd: "plain", configPaths: [["mcp_servers"]] },
  "a key path that is not there leaves the layer out": { userConfig: 'model = "m"\n', cwd: "plain", configPaths: [["mcp_servers"]] },
  "several paths keep the file's order": {
    userConfig: SERVERS,
    cwd: "plain",
    configPaths: [["mcp_servers", "y"], ["mcp_servers", "z", "args"]],
  },
  "a value that is not a table, and a path through one": {
    userConfig: 'mcp_servers = 5\n[a.b]\nc = "x"\n',
    cwd: "plain",
    configPaths: [["mcp_servers"], ["a", "b", "c"], ["a", "zz"], ["mcp_servers", "x"]],
  },
  "an empty table is kept": { userConfig: "[mcp_servers]\n", cwd: "plain", configPaths: [["mcp_servers"]] },
  "a trusted project without Git: its own .codex/config.toml": { userConfig: TRUST("plain"), cwd: "plain", configPaths: [["mcp_servers"]] },
  "a trusted repository, from a subdirectory: root first, then down to cwd": { userConfig: TRUST("repo"), cwd: "repo/sub", configPaths: [["mcp_servers"]] },
  "a trusted directory inside a repository: from it down to cwd": { userConfig: TRUST("repo/sub"), cwd: "repo/sub", configPaths: [["mcp_servers"]] },
  "a trusted directory above cwd but outside its repository does not count": {
    userConfig: `[projects."<projects>"]\ntrust_level = "trusted"\n`,
    cwd: "repo/sub",
    configPaths: [["mcp_servers"]],
  },
  "without a repository only cwd's own entry counts": { userConfig: `[projects."<projects>"]\ntrust_level = "trusted"\n`, cwd: "plain", configPaths: [["mcp_servers"]] },
  "an untrusted project is left out": { userConfig: `[projects."<projects>/plain"]\ntrust_level = "untrusted"\n`, cwd: "plain", configPaths: [["mcp_servers"]] },
  "a cwd that does not exist": { userConfig: SERVERS, cwd: "missing/deeper", configPaths: [["mcp_servers"]] },
  "both lists empty": { cwd: "plain", configPaths: [], requirementsPaths: [] },
  "an empty key path": { cwd: "plain", configPaths: [[]], requirementsPaths: [] },
};

describe("environmentConfig/read against upstream", () => {
  for (const [name, scenario] of Object.entries(scenarios)) {
    it(name, async () => {
      const projects = projectTree();
      execmuxCodexHome = join(scratchDirectory("codex-home"), ".codex");
      vi.stubEnv("CODEX_HOME", execmuxCodexHome);
      const upstreamCodexHome = join(upstream.home, ".codex");
      const expected = comparable(await ask(upstream.url, upstreamCodexHome, projects, scenario), upstreamCodexHome, upstream.home);
      const actual = comparable(await ask(daemon.url, execmuxCodexHome, projects, scenario), execmuxCodexHome, homedir());
      expect(actual).toEqual(expected);
    });
  }

  it("a config that does not parse: -32603 naming the file (the parser's words after it are each one's own)", async () => {
    const projects = projectTree();
    execmuxCodexHome = join(scratchDirectory("codex-home"), ".codex");
    vi.stubEnv("CODEX_HOME", execmuxCodexHome);
    const broken: Scenario = { userConfig: "this is not toml = =\n", cwd: "plain", configPaths: [["mcp_servers"]] };
    const upstreamAnswer = (await ask(upstream.url, join(upstream.home, ".codex"), projects, broken)) as { code: number; message: string };
    const execmuxAnswer = (await ask(daemon.url, execmuxCodexHome, projects, broken)) as { code: number; message: string };
    expect(upstreamAnswer).toMatchObject({ code: -32603, message: expect.stringMatching(/^failed to load executor-local config: .*\/\.codex\/config\.toml:1:6: /) });
    expect(execmuxAnswer.code).toBe(-32603);
    expect(execmuxAnswer.message.startsWith(`failed to load executor-local config: ${join(execmuxCodexHome, "config.toml")}: `)).toBe(true);
  });
});

describe("environmentConfig/read bounds", () => {
  it("a config file too large, or too many key paths, is refused and the daemon goes on", async () => {
    const codexHome = join(scratchDirectory("codex-home"), ".codex");
    mkdirSync(codexHome, { recursive: true });
    vi.stubEnv("CODEX_HOME", codexHome);
    writeFileSync(join(codexHome, "config.toml"), `# ${"x".repeat(2 * 1024 * 1024)}\n`);
    const client = await WireClient.ready(daemon.url);
    const cwd = pathToFileURL(scratchDirectory("cwd")).href;
    const tooLarge = await client.request("environmentConfig/read", { cwd, configPaths: [["mcp_servers"]], requirementsPaths: [] });
    expect(tooLarge.error).toMatchObject({ code: -32603, message: expect.stringContaining("is larger than 1048576 bytes") });
    const tooMany = await client.request("environmentConfig/read", { cwd, configPaths: Array.from({ length: 257 }, () => ["a"]), requirementsPaths: [] });
    expect(tooMany.error).toMatchObject({ code: -32602 });
    const tooDeep = await client.request("environmentConfig/read", { cwd, configPaths: [Array.from({ length: 33 }, () => "a")], requirementsPaths: [] });
    expect(tooDeep.error).toMatchObject({ code: -32602 });
    expect(await client.call("environment/status")).toEqual({ status: "ready" });
    client.close();
  });
});
