/** The `execmux` client commands as a person or a script uses them, and the MCP server with a real MCP client. */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { CLI, runCli, spawnDaemon } from "./helpers/cli.js";
import { freePort } from "./helpers/free-port.js";
import { residentBytes } from "./helpers/procfs.js";
import { scratchDirectory } from "./helpers/scratch.js";

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** Runs `command` in a detached tmux session of its own, killed after `body`. */
async function inTmux(name: string, command: string, body: (screen: () => string) => Promise<void>): Promise<void> {
  const session = `execmux-${name}-${process.pid}`;
  tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", command);
  try {
    await body(() => tmux("capture-pane", "-p", "-t", session));
  } finally {
    try {
      tmux("kill-session", "-t", session);
    } catch {
      // already gone
    }
  }
}

/** Starts the CLI and resolves once its stdout has shown `text`; stdin stays open. */
async function startCli(args: string[], text: string) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString();
      if (stdout.includes(text)) resolve();
    });
    void exited.then((code) => reject(new Error(`execmux ${args[0]} exited ${code}: ${stderr}`)));
  });
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

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
      await vi.waitFor(() => expect(screen()).toMatch(/[$#] ?$/m), { timeout: 30_000 });
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

  it("runs where the caller stands for a loopback daemon, resolves a relative --cwd, and the child's PWD says where it runs", async () => {
    const daemon = await startTestDaemon();
    const here = scratchDirectory("cwd");
    mkdirSync(join(here, "sub"));
    const where = "pwd; printenv PWD";
    expect(await runCli(["exec", "--url", daemon.url, "--", "sh", "-c", where], {}, undefined, here)).toMatchObject({ code: 0, stdout: `${here}\n${here}\n` });
    const relative = await runCli(["exec", "--url", daemon.url, "--cwd", "sub", "--", "sh", "-c", where], {}, undefined, here);
    expect(relative).toMatchObject({ code: 0, stdout: `${here}/sub\n${here}/sub\n` });
    // printenv does not fix PWD up the way a shell does: this is what the daemon passed.
    expect((await runCli(["exec", "--url", daemon.url, "--cwd", "/usr", "--", "printenv", "PWD"])).stdout).toBe("/usr\n");
  });

  it("exits 127 like a shell when the program is not there", async () => {
    const daemon = await startTestDaemon();
    const missing = await runCli(["exec", "--url", daemon.url, "--", "no-such-program-here"]);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toMatch(/^execmux: no-such-program-here: command not found on the daemon/);
    const tty = await runCli(["exec", "--tty", "--url", daemon.url, "--", "no-such-program-here"]);
    expect(tty.code).toBe(127);
  });

  it("ends quietly when its reader goes away (execmux ps | head -c 1), no EPIPE stack trace", async () => {
    const daemon = await startTestDaemon();
    for (let index = 0; index < 3; index++) await runCli(["exec", "--url", daemon.url, "--detach", "--", "sleep", "30"]);
    // The reader takes one byte and closes the pipe before ps has written all its lines.
    const piped = spawn("sh", ["-c", `"${process.execPath}" "${CLI}" ps --url ${daemon.url} | head -c 1 >/dev/null`], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    piped.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    await new Promise((resolve) => piped.once("close", resolve));
    expect(stderr).toBe("");
  });

  it("runs in the session named by --session or EXECMUX_SESSION", async () => {
    const daemon = await startTestDaemon();
    const detached = await runCli(["exec", "--url", daemon.url, "--detach", "--", "sleep", "30"]);
    const session = /session (\S+)/.exec(detached.stdout)![1]!;
    expect(await runCli(["exec", "--url", daemon.url, "--session", session, "--", "echo", "by-flag"])).toMatchObject({ code: 0, stdout: "by-flag\n" });
    expect(await runCli(["exec", "--url", daemon.url, "--", "echo", "by-variable"], { EXECMUX_SESSION: session })).toMatchObject({ code: 0, stdout: "by-variable\n" });
    expect(daemon.registry.size).toBe(1);
    const ps = await runCli(["ps", "--url", daemon.url, "--session", session]);
    expect(ps.stdout.trim().split("\n")).toHaveLength(1 + 3);
  });

  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it(`ends at once on ${signal} while the daemon is unreachable (exit ${code})`, async () => {
      // In-process, so the SIGKILL drops the connection at once (a process host would keep it).
      const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--process-host", "in-process"]);
      const cli = await startCli(["exec", "--url", daemon.url, "--", "sh", "-c", "echo started; exec sleep 300"], "started");
      daemon.child.kill("SIGKILL");
      await daemon.exited;
      cli.child.kill(signal);
      expect(await cli.exited).toBe(code);
      expect(cli.stderr()).toMatch(new RegExp(`${signal} while the daemon is unreachable; exiting`));
    });
  }

  it("says clearly when the daemon is unreachable or refuses the token", async () => {
    const unreachable = await runCli(["exec", "--url", "ws://127.0.0.1:1", "--", "true"]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^execmux: cannot connect to ws:\/\/127\.0\.0\.1:1/);
    const daemon = await startTestDaemon({ token: "right" });
    const refused = await runCli(["exec", "--url", daemon.url, "--", "true"], { EXECMUX_TOKEN: "wrong" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the token \(HTTP 401\)/);
    const missing = await runCli(["exec", "--url", daemon.url, "--", "true"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/requires a token and none was given \(HTTP 401\)/);
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
    // Without --session: every session of this identity, this one with its process's state and command.
    const all = await runCli(["ps", "--url", daemon.url]);
    expect(all.stdout).toMatch(new RegExp(`^session ${session}  detached, .*\\n  PROCESS .*\\n  ${processId}\\s+closed\\s.*\\s6\\s.*sh -c`, "m"));
  });

  it("detaches from a pipe process with Ctrl-] in a terminal, and leaves the terminal as it was", async () => {
    const daemon = await startTestDaemon();
    const detached = await runCli(["exec", "--url", daemon.url, "--detach", "--", "sh", "-c", "echo job-started; exec sleep 300"]);
    const session = /session (\S+)/.exec(detached.stdout)![1]!;
    const processId = /process (\S+)/.exec(detached.stdout)![1]!;
    const attach = `${process.execPath} ${CLI} attach --url ${daemon.url} --session ${session} ${processId}`;
    // Run by a wrapper in the same process group, as `npx execmux attach` is: the key must not signal the group.
    await inTmux("detach", `sh -c '${attach}; echo inner=$?'; echo "exit=$?"; stty -a | grep -o 'eol = [^;]*'; sleep 60`, async (screen) => {
      await vi.waitFor(() => expect(screen()).toContain("job-started"), { timeout: 30_000 });
      tmux("send-keys", "-t", `execmux-detach-${process.pid}`, "C-]");
      await vi.waitFor(() => expect(screen()).toMatch(/\[execmux: detached\]\s+inner=0\s+exit=0\s+eol = <undef>/), { timeout: 10_000 });
    });
    // Ctrl-C ends attach too, and the terminal is still put back.
    await inTmux("interrupt", `${attach}; echo "exit=$?"; stty -a | grep -o 'eol = [^;]*'; sleep 60`, async (screen) => {
      await vi.waitFor(() => expect(screen()).toContain("job-started"), { timeout: 30_000 });
      tmux("send-keys", "-t", `execmux-interrupt-${process.pid}`, "C-c");
      await vi.waitFor(() => expect(screen()).toMatch(/exit=130\s+eol = <undef>/), { timeout: 10_000 });
    });
    // Ctrl-\ (QUIT) too: ended by its signal's default action, attach would leave Ctrl-] as the end of line.
    await inTmux("quit", `${attach}; echo "exit=$?"; stty -a | grep -o 'eol = [^;]*'; sleep 60`, async (screen) => {
      await vi.waitFor(() => expect(screen()).toContain("job-started"), { timeout: 30_000 });
      tmux("send-keys", "-t", `execmux-quit-${process.pid}`, "C-\\");
      await vi.waitFor(() => expect(screen()).toMatch(/exit=131\s+eol = <undef>/), { timeout: 10_000 });
    });
    expect(daemon.registry.all()[0]!.list()[0]!.exitCode).toBeNull();
  });

  it("--tty: Ctrl-C ends it at once while the daemon is unreachable (the remote terminal cannot get the key)", async () => {
    const daemon = await spawnDaemon();
    await inTmux("tty-outage", `${process.execPath} ${CLI} exec --tty --url ${daemon.url} -- bash --norc -i; echo "exit=$?"; trap "" INT; sleep 60`, async (screen) => {
      await vi.waitFor(() => expect(screen()).toMatch(/[$#] ?$/m), { timeout: 30_000 });
      daemon.child.kill("SIGKILL");
      await daemon.exited;
      // Again until it ends, as a person would: the first may be typed before the command has seen the socket close.
      // (The pane's shell ignores the later ones, so the pane stays to be read.)
      await vi.waitFor(
        () => {
          tmux("send-keys", "-t", `execmux-tty-outage-${process.pid}`, "C-c");
          expect(screen()).toMatch(/SIGINT while the daemon is unreachable; exiting[\s\S]*exit=130/);
        },
        { timeout: 20_000, interval: 1_500 },
      );
    });
  });

  it("a second attach says who holds the session instead of fighting over it; --takeover takes it, and the first stops", async () => {
    const daemon = await startTestDaemon();
    const detached = await runCli(["exec", "--url", daemon.url, "--detach", "--", "sh", "-c", "echo job-started; exec cat"]);
    const session = /session (\S+)/.exec(detached.stdout)![1]!;
    const processId = /process (\S+)/.exec(detached.stdout)![1]!;
    const attachArgs = ["attach", "--url", daemon.url, "--session", session, processId];
    const first = await startCli(attachArgs, "job-started");

    const second = await runCli(attachArgs);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(`^execmux: session ${session} is already attached to another connection \\(client "execmux attach, pid ${first.child.pid} on [^"]+", attached \\d+ s ago\\); stop that client first, or pass --takeover`),
    );

    const third = await startCli([...attachArgs, "--takeover"], "job-started");
    expect(await first.exited).toBe(1);
    expect(first.stderr()).toContain(`[execmux: session ${session} was taken over by another connection]`);
    // The one that took over keeps the session: what it types reaches the process.
    third.child.stdin.write("still here\n");
    await vi.waitFor(() => expect(third.stdout()).toContain("still here"));
    third.child.kill("SIGKILL");
  });
});

describe("execmux mcp", () => {
  it("waits for a daemon that is not up yet, and after a daemon restart starts a new session and says so", async () => {
    const url = `ws://127.0.0.1:${await freePort()}`;
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--url", url], stderr: "ignore" });
    const client = new Client({ name: "test-agent", version: "1.0.0" });
    await client.connect(transport);
    const text = (result: Awaited<ReturnType<typeof client.callTool>>) => (result.content as { text: string }[]).map((part) => part.text);
    try {
      const early = client.callTool({ name: "exec_command", arguments: { cmd: "echo first call", yield_time_ms: 5000, login: false } });
      let daemon = await spawnDaemon(["--listen", url]);
      expect(text(await early)).toEqual([expect.stringMatching(/Process exited with code 0\nOutput:\n[\s\S]*first call/)]);
      const running = await client.callTool({ name: "exec_command", arguments: { cmd: "cat", yield_time_ms: 100, login: false } });
      const lostId = Number(/session ID (\d+)/.exec(text(running)[0]!)![1]);

      daemon.child.kill("SIGTERM");
      await daemon.exited;
      daemon = await spawnDaemon(["--listen", url]);
      const after = text(await client.callTool({ name: "exec_command", arguments: { cmd: "echo after restart", yield_time_ms: 5000, login: false } }));
      expect(after).toHaveLength(2);
      expect(after[0]).toMatch(new RegExp(`^Note: the execmux daemon's session was lost \\(.*\\); a new session was started\\. The processes of session IDs ${lostId} are gone\\.$`));
      expect(after[1]).toMatch(/Process exited with code 0\nOutput:\n[\s\S]*after restart/);
      const stale = await client.callTool({ name: "write_stdin", arguments: { session_id: lostId, chars: "x" } });
      expect(stale.isError).toBe(true);
      expect(text(stale)).toEqual([`Error: session ID ${lostId} was lost with the daemon's session (the daemon restarted, or the session expired); its process is gone: run the command again with exec_command`]);
    } finally {
      await client.close();
    }
  });

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
