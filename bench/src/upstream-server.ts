/**
 * The upstream `codex exec-server` as a bench baseline: the pinned
 * @openai/codex that scripts/ensure-upstream.mjs installs (as the tests get
 * it), started the way test/helpers/upstream.ts starts it: loopback, an
 * ephemeral port, no auth, a scratch HOME and TMPDIR under .cache.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
// @ts-expect-error: a plain .mjs script without types; its function and constants are used as they are.
import { ensureUpstream, UPSTREAM_CODEX_VERSION, upstreamDir } from "../../scripts/ensure-upstream.mjs";

export const upstreamVersion: string = UPSTREAM_CODEX_VERSION;

export class UpstreamServer {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    private readonly scratch: string,
  ) {}

  /** Installs the pinned upstream if missing (about 400 MB, once), then starts its exec-server. */
  static async start(): Promise<UpstreamServer> {
    const binary = ensureUpstream() as string;
    // Upstream refuses helper aliases under its TMPDIR, so TMPDIR is HOME's
    // sibling rather than its parent (see test/helpers/upstream.ts).
    const scratch = mkdtempSync(join(dirname(upstreamDir as string), "upstream-bench-"));
    const home = join(scratch, "home");
    const temporary = join(scratch, "tmp");
    mkdirSync(join(home, ".codex"), { recursive: true });
    mkdirSync(temporary);
    const child = spawn(binary, ["exec-server", "--listen", "ws://127.0.0.1:0"], {
      cwd: home,
      env: { ...process.env, HOME: home, CODEX_HOME: join(home, ".codex"), TMPDIR: temporary },
      stdio: ["ignore", "pipe", "pipe"],
    });
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
      return new UpstreamServer(child, url, scratch);
    } catch (error) {
      child.kill("SIGKILL");
      rmSync(scratch, { recursive: true, force: true });
      throw error;
    }
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
    rmSync(this.scratch, { recursive: true, force: true });
  }
}
