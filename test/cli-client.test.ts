/** The `execmux` client commands as a person or a script uses them, and the MCP server with a real MCP client. */
import { execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { CLI, runCli } from "./helpers/cli.js";
import { residentBytes } from "./helpers/procfs.js";
import { scratchDirectory } from "./helpers/scratch.js";

describe("execmux exec", () => {
  it("streams stdout and stderr apart and exits with the remote exit code", async () => {
    const daemon = await startTestDaemon();
    const result = await runCli(["exec", "--url", daemon.url, "--", "sh", "-c", "echo to-out; echo to-err >&2; exit 7"]);
    expect(result).toEqual({ code: 7, stdout: "to-out\n", stderr: "to-err\n" });
    const signalled = await runCli(["exec", "--url", daemon.url, "--", "sh", "-c", "kill -TERM $$"]);
    expect(signalled.code).toBe(143);
  });

  it("forwards stdin, sets -e variables and --cwd", async () => {
    const daemon = await startTestDaemon();
    const piped = await runCli(["exec", "--url", daemon.url, "--", "tr", "a-z", "A-Z"], {}, "hello stdin\n");
    expect(piped).toMatchObject({ code: 0, stdout: "HELLO STDIN\n" });
    const env = await runCli(["exec", "--url", daemon.url, "-e", "GREETING=hi there", "--cwd", "/usr", "--", "sh", "-c", 'echo "$GREETING from $(pwd)"']);
    expect(env.stdout).toBe("hi there from /usr\n");
  });

  it("runs --tty in a real terminal: a PTY of the terminal's size that follows resizes", async () => {
    const daemon = await startTestDaemon();
    const session = `execmux-tty-${process.pid}`;
    const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
    tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", `${process.execPath} ${CLI} exec --tty --url ${daemon.url} -- bash --norc -i`);
    try {
      const screen = () => tmux("capture-pane", "-p", "-t", session);
      await vi.waitFor(() => expect(screen()).toMatch(/[$#] ?$/m), { timeout: 10_000 });
      tmux("send-keys", "-t", session, "tty; stty size", "Enter");
      await vi.waitFor(() => expect(screen()).toMatch(/\/dev\/pts\/\d+\n30 100/), { timeout: 10_000 });
      tmux("resize-window", "-t", session, "-x", "120", "-y", "40");
      tmux("send-keys", "-t", session, "stty size", "Enter");
      await vi.waitFor(() => expect(screen()).toMatch(/40 120/), { timeout: 10_000 });
      tmux("send-keys", "-t", session, "exit", "Enter");
      await vi.waitFor(() => expect(() => tmux("has-session", "-t", session)).toThrow(), { timeout: 10_000 });
    } finally {
      try {
        tmux("kill-session", "-t", session);
      } catch {
        // already gone
      }
    }
  });

  it("says clearly when the daemon is unreachable or refuses the token", async () => {
    const unreachable = await runCli(["exec", "--url", "ws://127.0.0.1:1", "--", "true"]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^execmux: cannot connect to ws:\/\/127\.0\.0\.1:1/);
    const daemon = await startTestDaemon({ token: "right" });
    const refused = await runCli(["exec", "--url", daemon.url, "--", "true"], { EXECMUX_TOKEN: "wrong" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the token \(HTTP 401\)/);
    const accepted = await runCli(["exec", "--url", daemon.url, "--token", "right", "--", "echo", "in"]);
    expect(accepted).toMatchObject({ code: 0, stdout: "in\n" });
  });

  it("reads the token from a file (--token-file or EXECMUX_TOKEN_FILE), keeping it off the command line", async () => {
    const daemon = await startTestDaemon({ token: "from-a-file" });
    const file = join(scratchDirectory("client-token"), "token");
    writeFileSync(file, "# the sandbox's token\nfrom-a-file\n");
    expect(await runCli(["exec", "--url", daemon.url, "--token-file", file, "--", "echo", "flag"])).toMatchObject({ code: 0, stdout: "flag\n" });
    expect(await runCli(["exec", "--url", daemon.url, "--", "echo", "env"], { EXECMUX_TOKEN_FILE: file })).toMatchObject({ code: 0, stdout: "env\n" });
    const missing = await runCli(["exec", "--url", daemon.url, "--token-file", `${file}.missing`, "--", "true"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the token file/);
  });

  it("ends like a member of a pipeline when its reader goes away: exit 141, and the remote writer gets SIGPIPE", async () => {
    const daemon = await startTestDaemon();
    const cli = spawn(process.execPath, [CLI, "exec", "--url", daemon.url, "--", "yes"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    cli.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    const exited = new Promise<number | null>((resolve) => cli.once("close", resolve));
    // `execmux exec -- yes | head -c 1`
    await new Promise((resolve) => cli.stdout.once("data", resolve));
    cli.stdout.destroy();
    expect(await exited).toBe(141);
    expect(stderr).toBe("");
    const remote = () => daemon.registry.all()[0]!.list()[0]!;
    await vi.waitFor(() => expect(remote().exitCode).toBe(141));
  });

  it("paces the remote process to its own reader: a stalled pipe pauses it, and nothing piles up in the client", async () => {
    const daemon = await startTestDaemon();
    const total = 300_000_000;
    const cli = spawn(process.execPath, [CLI, "exec", "--url", daemon.url, "--", "head", "-c", String(total), "/dev/zero"], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise<number | null>((resolve) => cli.once("close", resolve));
    // Nobody reads the client's stdout yet.
    const remote = () => daemon.registry.all()[0]?.list()[0];
    await vi.waitFor(() => expect(remote()?.paused).toBe(true), { timeout: 20_000 });
    // The credit window (16 MiB) and the runtime, not the 300 MB on offer.
    expect(residentBytes(cli.pid!)).toBeLessThan(200 * 1024 * 1024);
    let received = 0;
    cli.stdout.on("data", (data: Buffer) => (received += data.length));
    expect(await exited).toBe(0);
    expect(received).toBe(total);
  });
});

describe("execmux ps and attach", () => {
  it("lists a detached session's processes and attaches to one, replaying its output", async () => {
    const daemon = await startTestDaemon();
    const detached = await runCli(["exec", "--url", daemon.url, "--detach", "--", "sh", "-c", "echo first; read line; echo got:$line; exit 6"]);
    const session = /session (\S+)/.exec(detached.stdout)![1]!;
    const processId = /process (\S+)/.exec(detached.stdout)![1]!;
    const ps = await runCli(["ps", "--url", daemon.url, "--session", session]);
    expect(ps.stdout).toMatch(new RegExp(`^PROCESS\\s+STATE\\s+PID.*\\n${processId}\\s+running\\s+\\d+`, "m"));
    const attached = await runCli(["attach", "--url", daemon.url, "--session", session, processId], {}, "typed\n");
    expect(attached).toMatchObject({ code: 6, stdout: "first\ngot:typed\n" });
    const missing = await runCli(["ps", "--url", daemon.url]);
    expect(missing.code).toBe(2);
  });
});

describe("execmux mcp", () => {
  it("serves exec_command and write_stdin to a real MCP client, with errors as tool errors", async () => {
    const daemon = await startTestDaemon();
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--url", daemon.url], stderr: "ignore" });
    const client = new Client({ name: "test-agent", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(["exec_command", "write_stdin"]);
      expect(tools.find((tool) => tool.name === "exec_command")!.inputSchema.required).toEqual(["cmd"]);

      const ran = await client.callTool({ name: "exec_command", arguments: { cmd: "echo hello from mcp", yield_time_ms: 5000, login: false } });
      const text = (ran.content as { text: string }[])[0]!.text;
      expect(text).toMatch(/^Wall time: \d+\.\d{3} seconds\nProcess exited with code 0\nOutput:\n[\s\S]*hello from mcp/);

      const shell = await client.callTool({ name: "exec_command", arguments: { cmd: "cat", yield_time_ms: 100, login: false } });
      const sessionId = Number(/session ID (\d+)/.exec((shell.content as { text: string }[])[0]!.text)![1]);
      let echoed = "";
      await vi.waitFor(async () => {
        const typed = await client.callTool({ name: "write_stdin", arguments: { session_id: sessionId, chars: echoed ? "" : "ping\n", yield_time_ms: 100 } });
        echoed += (typed.content as { text: string }[])[0]!.text;
        expect(echoed).toContain("ping");
      });

      const bad = await client.callTool({ name: "write_stdin", arguments: { session_id: 999, chars: "x" } });
      expect(bad.isError).toBe(true);
      expect((bad.content as { text: string }[])[0]!.text).toBe("Error: unknown session id 999");
    } finally {
      await client.close();
    }
  });
});
