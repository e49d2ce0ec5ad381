/**
 * The upstream `codex exec-server` as a bench baseline: the pinned
 * @openai/codex that scripts/ensure-upstream.mjs installs (as the tests get
 * it), started as the tests start it (scripts/launch-upstream.mjs).
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
// @ts-expect-error: a plain .mjs script without types; its function and constants are used as they are.
import { ensureUpstream, UPSTREAM_CODEX_VERSION } from "../../scripts/ensure-upstream.mjs";
// @ts-expect-error: a plain .mjs script without types; the launch the tests use too.
import { launchUpstream } from "../../scripts/launch-upstream.mjs";

export const upstreamVersion: string = UPSTREAM_CODEX_VERSION;

export class UpstreamServer {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    /** Kills it if still running, and removes its scratch HOME. */
    private readonly kill: () => void,
  ) {}

  /** Installs the pinned upstream if missing (about 400 MB, once), then starts its exec-server. */
  static async start(): Promise<UpstreamServer> {
    const launched = (await launchUpstream(ensureUpstream() as string)) as { url: string; child: ChildProcess; stop(): void };
    return new UpstreamServer(launched.child, launched.url, launched.stop);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resident set size in bytes, from /proc (as DaemonProcess.rss). */
  rss(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once("exit", resolve));
      this.child.kill("SIGTERM");
      await exited;
    }
    this.kill();
  }
}
