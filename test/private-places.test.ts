/**
 * The daemon's private places (issue #34): no other user can keep it from
 * starting by taking the name of its state directory first, and a daemon
 * SIGKILLed with all its processes leaves nothing in $TMPDIR.
 */
import { spawn } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it, vi } from "vitest";
import { CLI, spawnTestDaemon } from "./helpers/cli.js";
import { isRunning } from "./helpers/procfs.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

const NOBODY = 65534;
const PATH = process.env.PATH ?? "/usr/bin:/bin";

/** A directory like /tmp: anyone may make names in it, nobody may remove another's (mode 1777). */
function sharedTemp(): string {
  const directory = scratchDirectory("shared-tmp");
  chmodSync(directory, 0o1777);
  return directory;
}

/** A directory `owner` made first, closed to everyone else. */
function takenBy(path: string, owner: number): void {
  mkdirSync(path, { mode: 0o700 });
  chownSync(path, owner, owner);
}

/** Runs a command through the daemon and returns its output. */
async function runsCommands(url: string): Promise<string> {
  const client = await WireClient.ready(url);
  await client.call("process/start", { processId: "p", argv: ["sh", "-c", "echo works"], cwd: "/", env: { PATH } });
  await client.closedOf("p");
  client.close();
  return client.output("p");
}

describe("the state directory", () => {
  it("is not root's to lose: another user's $TMPDIR/execmux-0 does not keep root's daemon from starting", async () => {
    expect(process.getuid?.(), "these tests run as root, to play two users").toBe(0);
    const tmp = sharedTemp();
    takenBy(join(tmp, "execmux-0"), NOBODY);
    const daemon = await spawnTestDaemon([], { TMPDIR: tmp, XDG_RUNTIME_DIR: "" });
    expect(await runsCommands(daemon.url)).toBe("works\n");
    // The name another user holds was never used.
    expect(readdirSync(join(tmp, "execmux-0"))).toEqual([]);
  });

  it("is not any user's to lose: when another user took the stable name, an unpredictable private one is used, with a warning", async () => {
    const tmp = sharedTemp();
    takenBy(join(tmp, `execmux-${NOBODY}`), 0);
    const child = spawn(process.execPath, [CLI, "serve", "--listen", "ws://127.0.0.1:0", "--log-level", "warn", "--process-containment", "process-tree"], {
      env: { PATH, TMPDIR: tmp, HOME: tmp },
      uid: NOBODY,
      gid: NOBODY,
      cwd: "/",
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once("line", resolve);
        child.once("exit", (code) => reject(new Error(`the daemon exited (${code}) before it listened: ${stderr}`)));
      });
      expect(await runsCommands(url)).toBe("works\n");
      expect(stderr).toContain(`passed over ${join(tmp, `execmux-${NOBODY}`)}: it belongs to user 0`);
      const chosen = readdirSync(tmp).filter((name) => name.startsWith(`execmux-${NOBODY}-`));
      expect(chosen).toHaveLength(1);
      const found = statSync(join(tmp, chosen[0]!));
      expect([found.uid, found.mode & 0o777]).toEqual([NOBODY, 0o700]);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(undefined)));
    }
  });

  it("refuses a configured one that is not private, saying why", async () => {
    const tmp = sharedTemp();
    const open = join(tmp, "open");
    mkdirSync(open, { mode: 0o755 });
    chmodSync(open, 0o755);
    const daemon = spawn(process.execPath, [CLI, "serve", "--listen", "ws://127.0.0.1:0", "--state-directory", open], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    daemon.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    const code = await new Promise((resolve) => daemon.once("exit", resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain(`--state-directory ${open} is not private: its mode is 755, not 700`);
  });
});

describe("a daemon SIGKILLed", () => {
  it("leaves nothing in $TMPDIR: it and its process host keep nothing there (no FIFOs, no sockets, no logs)", async () => {
    const tmp = scratchDirectory("no-leftovers");
    const first = await spawnTestDaemon(["--process-host", "in-process"], { TMPDIR: tmp });
    expect(await runsCommands(first.url)).toBe("works\n");
    process.kill(first.pid, "SIGKILL");
    await vi.waitFor(() => expect(isRunning(first.pid)).toBe(false), { timeout: 10_000, interval: 20 });
    // The state directory may be here (a user without $XDG_RUNTIME_DIR, not root); nothing else may.
    const uid = process.getuid?.() ?? 0;
    expect(readdirSync(tmp).filter((name) => name !== `execmux-${uid}`)).toEqual([]);
  });
});
