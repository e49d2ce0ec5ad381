/**
 * The newcomer's path: `git clone` of this repository's committed state into
 * a temporary directory, the README's install command once, then the
 * README's commands as a person types them: `npx execmux --version` (which
 * must not ask the registry), `npm link -w server` to get `execmux` on PATH,
 * `npm start` and its signals, `execmux exec`, `attach` in a terminal (tmux),
 * and `execmux mcp` driven by an MCP client across a daemon restart.
 * Slow (an `npm install`, from the npm cache where it can).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { freePort } from "./helpers/free-port.js";
import { isRunning } from "./helpers/procfs.js";

const repository = fileURLToPath(new URL("..", import.meta.url));
/** A bound, not an expectation: about a minute on a quiet 2-core machine, several when other work shares it. */
const INSTALL_TIMEOUT_MS = 480_000;

let workspace: string;
let clone: string;
/** Where `npm link` puts the global `execmux` (a prefix of the test's own). */
let prefix: string;
const started: ChildProcess[] = [];

/** The environment of a person at this machine, with the linked `execmux` on PATH. */
const userEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  PATH: `${prefix}/bin:${process.env.PATH}`,
  // The npm cache serves what it has; the registry is asked only for what it lacks.
  npm_config_prefer_offline: "true",
  ...extra,
});

function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd ?? clone, env: options.env ?? userEnv(), stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (data: Buffer) => (stdout += data.toString()));
    child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

/** `npm start` as the README gives it, in a process group of its own (as a terminal would), resolved once it printed its URL. */
async function npmStart(listen: string) {
  const child = spawn("npm", ["start"], { cwd: clone, env: userEnv({ EXECMUX_LISTEN: listen }), stdio: ["ignore", "pipe", "pipe"], detached: true });
  started.push(child);
  let stderr = "";
  child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => line.startsWith("ws://") && resolve(line));
    void exited.then((code) => reject(new Error(`npm start exited ${code}: ${stderr}`)));
  });
  // npm's child is the daemon itself (`exec node ...`), not a shell.
  const daemonPid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(" ")[0]);
  return { child, url, exited, daemonPid };
}

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), "execmux-fresh-clone-"));
  clone = join(workspace, "execmux");
  prefix = join(workspace, "prefix");
  execFileSync("git", ["clone", "--quiet", repository, clone]);
  const install = await run("npm", ["install"]);
  expect(install.code, install.stderr).toBe(0);
}, INSTALL_TIMEOUT_MS);

afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.pid) process.kill(-child.pid, "SIGKILL");
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

describe("a fresh clone after one `npm install`", () => {
  it("has `npx execmux` that runs the clone's own command without asking the registry", async () => {
    expect(readlinkSync(join(clone, "node_modules/.bin/execmux"))).toBe("../@execmux/server/bin/execmux.js");
    const version = JSON.parse(readFileSync(join(clone, "server/package.json"), "utf8")) as { version: string };
    // A registry nobody answers: any fetch would fail the command.
    const result = await run("npx", ["execmux", "--version"], { env: userEnv({ npm_config_registry: "http://127.0.0.1:9/" }) });
    expect(result.stdout).toBe(`execmux ${version.version}\n`);
    expect(result.code).toBe(0);
  });

  it("puts `execmux` on PATH with `npm link -w server`", async () => {
    const link = await run("npm", ["link", "-w", "server"], { env: userEnv({ npm_config_prefix: prefix }) });
    expect(link.code, link.stderr).toBe(0);
    const result = await run("execmux", ["--version"], { cwd: workspace });
    expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/^execmux \d+\.\d+\.\d+\n$/) });
  });

  for (const how of ["SIGTERM to npm", "Ctrl-C (SIGINT to the process group)"] as const) {
    it(`stops \`npm start\` and its daemon with exit code 0 on ${how}`, async () => {
      const { child, exited, daemonPid } = await npmStart("ws://127.0.0.1:0");
      expect(isRunning(daemonPid)).toBe(true);
      if (how === "SIGTERM to npm") child.kill("SIGTERM");
      else process.kill(-child.pid!, "SIGINT");
      expect(await exited).toBe(0);
      await vi.waitFor(() => expect(isRunning(daemonPid)).toBe(false));
    });
  }

  it("runs `execmux exec` where the caller stands, and `attach` detaches with Ctrl-] in a terminal", async () => {
    const daemon = await npmStart("ws://127.0.0.1:0");
    const env = userEnv({ EXECMUX_URL: daemon.url });
    expect(await run("execmux", ["exec", "--", "sh", "-c", "pwd; exit 3"], { env })).toMatchObject({ code: 3, stdout: `${clone}\n` });
    expect(await run("execmux", ["exec", "--", "wc", "-c"], { env, input: "data\n" })).toMatchObject({ code: 0, stdout: "5\n" });

    const detached = await run("execmux", ["exec", "--detach", "--", "sh", "-c", "echo job-started; exec sleep 300"], { env });
    const session = /session (\S+)/.exec(detached.stdout)![1]!;
    const processId = /process (\S+)/.exec(detached.stdout)![1]!;
    const tmuxSession = `execmux-fresh-clone-${process.pid}`;
    const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    tmux("new-session", "-d", "-s", tmuxSession, "-x", "100", "-y", "30", `PATH=${prefix}/bin:$PATH EXECMUX_URL=${daemon.url} execmux attach --session ${session} ${processId}; echo "exit=$?"; sleep 60`);
    try {
      const screen = () => tmux("capture-pane", "-p", "-t", tmuxSession);
      await vi.waitFor(() => expect(screen()).toContain("job-started"), { timeout: 20_000 });
      tmux("send-keys", "-t", tmuxSession, "C-]");
      await vi.waitFor(() => expect(screen()).toMatch(/\[execmux: detached\]\s+exit=0/), { timeout: 10_000 });
    } finally {
      tmux("kill-session", "-t", tmuxSession);
    }
    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toBe(0);
  });

  it("serves `execmux mcp` (as the README configures it) before the daemon is up and across a daemon restart", async () => {
    const listen = `ws://127.0.0.1:${await freePort()}`;
    const transport = new StdioClientTransport({ command: "execmux", args: ["mcp", "--url", listen], env: userEnv() as Record<string, string>, cwd: workspace, stderr: "ignore" });
    const client = new Client({ name: "fresh-clone-agent", version: "1.0.0" });
    await client.connect(transport);
    const texts = (result: Awaited<ReturnType<typeof client.callTool>>) => (result.content as { text: string }[]).map((part) => part.text);
    try {
      const first = client.callTool({ name: "exec_command", arguments: { cmd: "echo before", yield_time_ms: 5000, login: false } });
      let daemon = await npmStart(listen);
      expect(texts(await first)).toEqual([expect.stringMatching(/Process exited with code 0\nOutput:\n[\s\S]*before/)]);

      daemon.child.kill("SIGTERM");
      expect(await daemon.exited).toBe(0);
      daemon = await npmStart(listen);
      const after = texts(await client.callTool({ name: "exec_command", arguments: { cmd: "echo after", yield_time_ms: 5000, login: false } }));
      expect(after[0]).toMatch(/^Note: the execmux daemon's session was lost .*; a new session was started\.$/);
      expect(after[1]).toMatch(/Process exited with code 0\nOutput:\n[\s\S]*after/);
      daemon.child.kill("SIGTERM");
      expect(await daemon.exited).toBe(0);
    } finally {
      await client.close();
    }
  });
});
