/** `execmux serve` as a user runs it: one URL line on stdout, logs on stderr, clean shutdown. */
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { connect } from "@execmux/client";
import { runCli, spawnDaemon } from "./helpers/cli.js";
import { hostPidOf, isRunning, spawnerOf } from "./helpers/procfs.js";

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
      pids.push(...line.trim().split(/\s+/).map((pid) => hostPidOf(Number(pid), daemon.child.pid)));
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
    const pid = hostPidOf(await new Promise<number>((resolve) => handle.onOutput((event) => resolve(Number(Buffer.from(event.data).toString())))), daemon.child.pid);
    expect(isRunning(pid)).toBe(true);
    daemon.child.kill("SIGKILL");
    await daemon.exited;
    // The spawner process notices its parent is gone and kills every process group it started.
    await vi.waitFor(() => expect(isRunning(pid)).toBe(false));
  });

  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    it(`keeps serving when its spawner process is killed (${signal}), and the children it started keep running`, async () => {
      const daemon = await spawnDaemon();
      const client = await connect(daemon.url, { reconnect: false });
      const handle = await client.start({ argv: ["sh", "-c", "echo $$; exec sleep 300"] });
      const pid = hostPidOf(await new Promise<number>((resolve) => handle.onOutput((event) => resolve(Number(Buffer.from(event.data).toString())))), daemon.child.pid);
      const spawner = spawnerOf(daemon.child.pid!)!;
      expect(spawner).toBeDefined();
      process.kill(spawner, signal);
      // A new spawner takes over...
      await vi.waitFor(() => {
        const replacement = spawnerOf(daemon.child.pid!);
        expect(replacement).toBeDefined();
        expect(replacement).not.toBe(spawner);
      });
      // ...and a helper restart never takes a session's processes with it.
      expect(isRunning(pid)).toBe(true);
      const after = await client.start({ argv: ["sh", "-c", "echo still serving"] });
      let text = "";
      after.onOutput((event) => (text += Buffer.from(event.data).toString()));
      expect(await after.wait()).toBe(0);
      expect(text).toBe("still serving\n");
      // The orphaned child still ends through the protocol; its exit status died with its reaper.
      await handle.terminate();
      expect(await handle.wait()).toBe(-1);
      await vi.waitFor(() => expect(isRunning(pid)).toBe(false));
      client.close();
      expect(daemon.stderr()).toMatch(/the spawner process exited/);
      daemon.child.kill("SIGTERM");
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
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
