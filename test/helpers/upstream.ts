/**
 * The real upstream: `codex exec-server` from npm @openai/codex, at the
 * version scripts/ensure-upstream.mjs pins and `npm test` installs. A test
 * that needs it fails loudly when it is missing; it never skips.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach } from "vitest";
// @ts-expect-error: a plain .mjs script without types; only its constants are used.
import { UPSTREAM_CODEX_VERSION, upstreamBinary, upstreamDir } from "../../scripts/ensure-upstream.mjs";

export const upstreamVersion: string = UPSTREAM_CODEX_VERSION;

/** The upstream `codex` binary; throws (never skips) when `npm test`'s setup did not install it. */
export function upstreamCodex(): string {
  const binary = upstreamBinary as string;
  if (!existsSync(binary)) {
    throw new Error(`the upstream codex ${upstreamVersion} is missing at ${binary}: run node scripts/ensure-upstream.mjs (npm test does)`);
  }
  return binary;
}

const started = new Set<UpstreamServer>();
afterEach(() => {
  for (const server of started) server.stop();
  started.clear();
});

export interface UpstreamServer {
  readonly url: string;
  readonly child: ChildProcess;
  readonly home: string;
  /** Kills the server and removes its scratch HOME. */
  stop(): void;
}

/** Starts `codex exec-server --listen ws://127.0.0.1:0` with a scratch HOME; stopped after the test. */
export async function startUpstreamExecServer(extraArgs: string[] = []): Promise<UpstreamServer> {
  const server = await launchUpstreamExecServer(extraArgs);
  started.add(server);
  return server;
}

/**
 * The same, but the caller owns its lifetime: for a server shared by a
 * describe block (beforeAll/afterAll), which the per-test cleanup would kill.
 * Its working directory is its scratch HOME, which environmentInfo.cwd reports.
 */
export async function launchUpstreamExecServer(extraArgs: string[] = []): Promise<UpstreamServer> {
  const binary = upstreamCodex();
  // Upstream refuses to put its helper aliases (codex-linux-sandbox, which bwrap
  // execs) under its temporary directory, and sandboxed processes then fail to
  // start. So its TMPDIR is a sibling of its HOME: wherever the checkout is
  // (a CI clone may itself be under /tmp), HOME is never inside TMPDIR.
  const root = mkdtempSync(join(dirname(upstreamDir as string), "upstream-scratch-"));
  const home = join(root, "home");
  const temporary = join(root, "tmp");
  mkdirSync(join(home, ".codex"), { recursive: true });
  mkdirSync(temporary);
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
  child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
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
