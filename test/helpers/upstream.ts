/**
 * The real upstream: `codex exec-server` from npm @openai/codex, at the
 * version scripts/ensure-upstream.mjs pins and `npm test` installs. A test
 * that needs it fails loudly when it is missing; it never skips.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach } from "vitest";
// @ts-expect-error: a plain .mjs script without types; only its constants are used.
import { UPSTREAM_CODEX_VERSION, upstreamBinary } from "../../scripts/ensure-upstream.mjs";
import { scratchDirectory } from "./scratch.js";

export const upstreamVersion: string = UPSTREAM_CODEX_VERSION;

/** The upstream `codex` binary; throws (never skips) when `npm test`'s setup did not install it. */
export function upstreamCodex(): string {
  const binary = upstreamBinary as string;
  if (!existsSync(binary)) {
    throw new Error(`the upstream codex ${upstreamVersion} is missing at ${binary}: run node scripts/ensure-upstream.mjs (npm test does)`);
  }
  return binary;
}

const started = new Set<ChildProcess>();
afterEach(() => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  started.clear();
});

export interface UpstreamServer {
  readonly url: string;
  readonly child: ChildProcess;
  readonly home: string;
}

/** Starts `codex exec-server --listen ws://127.0.0.1:0` with a scratch HOME; resolves with its URL. */
export async function startUpstreamExecServer(extraArgs: string[] = []): Promise<UpstreamServer> {
  const home = scratchDirectory("upstream-home");
  mkdirSync(join(home, ".codex"), { recursive: true });
  const child = spawn(upstreamCodex(), ["exec-server", "--listen", "ws://127.0.0.1:0", ...extraArgs], {
    env: { ...process.env, HOME: home, CODEX_HOME: join(home, ".codex") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
  let stderr = "";
  child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("ws://")) resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`upstream exec-server exited (${code}) before printing its URL: ${stderr}`)));
  });
  return { url, child, home };
}
