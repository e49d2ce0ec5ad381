/**
 * The real upstream: `codex exec-server` from npm @openai/codex, at the
 * version scripts/ensure-upstream.mjs pins and `npm test` installs. A test
 * that needs it fails loudly when it is missing; it never skips.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { afterEach } from "vitest";
// @ts-expect-error: a plain .mjs script without types; only its constants are used.
import { UPSTREAM_CODEX_VERSION, upstreamBinary } from "../../scripts/ensure-upstream.mjs";
// @ts-expect-error: a plain .mjs script without types; its launch is shared with the bench.
import { launchUpstream } from "../../scripts/launch-upstream.mjs";

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

/**
 * Starts `codex exec-server --listen ws://127.0.0.1:0` with a scratch HOME,
 * which `prepareHome` may fill first; stopped after the test.
 */
export async function startUpstreamExecServer(extraArgs: string[] = [], prepareHome?: (home: string) => void): Promise<UpstreamServer> {
  const server = await launchUpstreamExecServer(extraArgs, prepareHome);
  started.add(server);
  return server;
}

/**
 * The same, but the caller owns its lifetime: for a server shared by a
 * describe block (beforeAll/afterAll), which the per-test cleanup would kill.
 * Its working directory is its scratch HOME, which environmentInfo.cwd reports.
 */
export async function launchUpstreamExecServer(extraArgs: string[] = [], prepareHome?: (home: string) => void): Promise<UpstreamServer> {
  return (await launchUpstream(upstreamCodex(), extraArgs, prepareHome)) as UpstreamServer;
}
