// Starts the pinned upstream `codex exec-server` (see ensure-upstream.mjs) the
// way the tests and the bench both need it: loopback, an ephemeral port, no
// auth, a scratch HOME and TMPDIR next to .cache/upstream-codex.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { upstreamDir } from "./ensure-upstream.mjs";

/**
 * Resolves with `{ url, child, home, stop }` once the server prints its URL;
 * `prepareHome(home)`, if given, runs before it starts (what it resolves only
 * at start, such as its skill locations, must be there by then);
 * `stop()` kills it (SIGKILL unless it has exited) and removes its scratch
 * directory. Rejects, leaving nothing behind, when it exits first.
 */
export async function launchUpstream(binary, extraArgs = [], prepareHome = undefined) {
  // Upstream refuses to put its helper aliases (codex-linux-sandbox, which bwrap
  // execs) under its temporary directory, and sandboxed processes then fail to
  // start. So its TMPDIR is a sibling of its HOME: wherever the checkout is
  // (a CI clone may itself be under /tmp), HOME is never inside TMPDIR.
  const root = mkdtempSync(join(dirname(upstreamDir), "upstream-scratch-"));
  const home = join(root, "home");
  const temporary = join(root, "tmp");
  mkdirSync(join(home, ".codex"), { recursive: true });
  mkdirSync(temporary);
  prepareHome?.(home);
  const child = spawn(binary, ["exec-server", "--listen", "ws://127.0.0.1:0", ...extraArgs], {
    cwd: home,
    env: { ...process.env, HOME: home, CODEX_HOME: join(home, ".codex"), TMPDIR: temporary },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(root, { recursive: true, force: true });
  };
  let stderr = "";
  child.stderr.on("data", (data) => (stderr += data.toString()));
  try {
    const url = await new Promise((resolve, reject) => {
      createInterface({ input: child.stdout }).on("line", (line) => {
        if (line.startsWith("ws://")) resolve(line.trim());
      });
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`upstream exec-server exited (${code}) before printing its URL: ${stderr}`)));
    });
    return { url, child, home, stop };
  } catch (error) {
    stop();
    throw error;
  }
}
