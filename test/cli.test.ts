/** `execmux serve` as a user runs it: one URL line on stdout, logs on stderr, clean shutdown. */
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { connect } from "@execmux/client";
import { runCli, spawnDaemon } from "./helpers/cli.js";
import { hostOf, hostPidOf, isRunning } from "./helpers/procfs.js";

describe("execmux serve", () => {
  it("prints exactly one ws:// line with the bound port on stdout and logs JSON to stderr", async () => {
    const daemon = await spawnDaemon();
    expect(daemon.url).toMatch(/^ws:\/\/127\.0\.0\.1:[1-9]\d*$/);
    const client = await connect(daemon.url);
    const handle = await client.start({ argv: ["true"] });
    await handle.wait();
    client.close();
    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(daemon.stdoutLines).toEqual([daemon.url]);
    const logLines = daemon.stderr().trim().split("\n").map((line) => JSON.parse(line) as { msg: string });
    expect(logLines.some((line) => line.msg === "process started")).toBe(true);
  });

  it("takes settings from EXECMUX_* variables", async () => {
    const daemon = await spawnDaemon([], { EXECMUX_LISTEN: "ws://127.0.0.1:0", EXECMUX_LOG_LEVEL: "silent" });
    expect(daemon.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    daemon.child.kill("SIGINT");
    expect((await daemon.exited).code).toBe(0);
    expect(daemon.stderr()).toBe("");
  });

  it("kills every process tree on SIGTERM and exits 0", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--kill-grace-ms", "300"]);
    const client = await connect(daemon.url);
    const pids: number[] = [];
    for (const tty of [false, true]) {
      // A child that ignores SIGTERM and a grandchild: only the SIGKILL after the grace gets them.
      const handle = await client.start({ argv: ["sh", "-c", "trap '' TERM; sleep 300 & echo $$ $!; wait"], tty });
      const line = await new Promise<string>((resolve) => {
        let seen = "";
        handle.onOutput((event) => {
          seen += Buffer.from(event.data).toString();
          if (seen.includes("\n")) resolve(seen);
        });
      });
      pids.push(...line.trim().split(/\s+/).map((pid) => hostPidOf(Number(pid), daemon.child.pid!)));
    }
    expect(pids).toHaveLength(4);
    expect(pids.every(isRunning)).toBe(true);
    daemon.child.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]));
  });

  it("leaves no child behind even when the daemon itself is killed outright", async () => {
    const daemon = await spawnDaemon();
    const client = await connect(daemon.url, { reconnect: false });
    const handle = await client.start({ argv: ["sh", "-c", "echo $$; exec sleep 300"] });
    const pid = hostPidOf(await new Promise<number>((resolve) => handle.onOutput((event) => resolve(Number(Buffer.from(event.data).toString())))), daemon.child.pid!);
    const host = hostOf(daemon.child.pid!)!;
    expect(isRunning(pid)).toBe(true);
    daemon.child.kill("SIGKILL");
    await daemon.exited;
    // Port 0: nobody could find this host again. It sees its daemon go and ends, every process with it.
    await vi.waitFor(() => expect([host, pid].filter(isRunning)).toEqual([]));
  });

  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    it(`stops, saying so, when its process host is killed (${signal}), and no child outlives the host`, async () => {
      const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--kill-grace-ms", "300"]);
      const client = await connect(daemon.url, { reconnect: false });
      // A child that ignores SIGTERM, and a grandchild that left its session.
      const handle = await client.start({ argv: ["sh", "-c", "trap '' TERM; setsid sleep 300 & echo $$ $!; wait"] });
      const line = await new Promise<string>((resolve) => handle.onOutput((event) => resolve(Buffer.from(event.data).toString())));
      const pids = line.trim().split(/\s+/).map((pid) => hostPidOf(Number(pid), daemon.child.pid!));
      expect(pids.every(isRunning)).toBe(true);
      const host = hostOf(daemon.child.pid!)!;
      process.kill(host, signal);
      // Every session went with the host: the daemon cannot serve them, and says why.
      expect((await daemon.exited).code).toBe(1);
      expect(daemon.stderr()).toContain("the process host is gone");
      await vi.waitFor(() => expect([host, ...pids].filter(isRunning)).toEqual([]));
    });
  }

  it("stops with a message naming the option when a setting is bad", async () => {
    const flag = await runCli(["serve", "--retained-bytes", "lots"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--retained-bytes \(EXECMUX_RETAINED_BYTES\) must be integer/);
    const unknown = await runCli(["serve", "--no-such-option", "1"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown option --no-such-option/);
    const env = await runCli(["serve"], { EXECMUX_KILL_GRACE_MS: "-5" });
    expect(env.stderr).toMatch(/--kill-grace-ms \(EXECMUX_KILL_GRACE_MS\) must be >= 0/);
  });

  it("names the allowed values once when a setting must be one of several", async () => {
    const result = await runCli(["serve", "--log-level", "loud"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'execmux: invalid configuration: --log-level (EXECMUX_LOG_LEVEL) must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent" (got "loud")\n',
    );
  });

  it("warns about an EXECMUX_* variable it does not know, suggesting the one meant", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0"], { EXECMUX_TOKN: "secret" });
    daemon.child.kill("SIGTERM");
    await daemon.exited;
    const warnings = daemon.stderr().trim().split("\n").map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.level === 40);
    expect(warnings.map((line) => line.msg)).toEqual(["unknown environment variable EXECMUX_TOKN is ignored (did you mean EXECMUX_TOKEN?)"]);
    // Next to a configuration error it may be the cause of, as a plain line.
    const bad = await runCli(["serve"], { EXECMUX_LISTN: "ws://127.0.0.1:0", EXECMUX_LOG_LEVEL: "x" });
    expect(bad.stderr).toMatch(/^execmux: warning: unknown environment variable EXECMUX_LISTN is ignored \(did you mean EXECMUX_LISTEN\?\)\n/);
  });

  it("has --help for every command and --version", async () => {
    const version = JSON.parse(readFileSync(new URL("../server/package.json", import.meta.url), "utf8")) as { version: string };
    expect(await runCli(["--version"])).toEqual({ code: 0, stdout: `execmux ${version.version}\n`, stderr: "" });
    const commands = ["serve", "exec", "ps", "attach", "mcp", "token"];
    const helps = await Promise.all(commands.map((command) => Promise.all([runCli([command, "--help"]), runCli(["help", command])])));
    for (const [index, [help, helpCommand]] of helps.entries()) {
      expect(help.code, commands[index]).toBe(0);
      expect(help.stdout, commands[index]).toMatch(new RegExp(`^Usage: execmux ${commands[index]}`));
      expect(helpCommand).toEqual(help);
    }
    // After `--`, --help belongs to the remote command.
    const remote = await runCli(["exec", "--url", "ws://127.0.0.1:1", "--", "ls", "--help"]);
    expect(remote.stderr).toMatch(/cannot connect/);
    const unknown = await runCli(["exec", "--no-such-flag"]);
    expect(unknown).toMatchObject({ code: 2, stderr: "execmux: unknown option --no-such-flag (see --help)\n" });
  });

  it("lists every option with its default in --help", async () => {
    const help = await runCli(["serve", "--help"]);
    expect(help.code).toBe(0);
    for (const option of ["--listen", "--retained-bytes", "--closed-retention-ms", "--kill-grace-ms", "--session-ttl-ms", "--max-message-bytes", "--log-level"]) {
      expect(help.stdout).toContain(option);
    }
    expect(help.stdout).toContain('"ws://127.0.0.1:7373"');
  });
});
