/** The real daemon, as a separate process, with its RSS, CPU and metrics readable. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../server/dist/cli.js", import.meta.url));
/** Node's flags for the daemon, as `npm start`, the `execmux` command and the image pass them (server/bin/execmux.js says why). */
export const DAEMON_NODE_FLAGS = ["--no-memory-reducer"];

/** The first child of `pid` whose command line matches. */
function childOf(pid: number, commandLine: RegExp): number | undefined {
  let children: string[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "latin1").trim().split(/\s+/).filter(Boolean);
  } catch {
    return undefined;
  }
  for (const child of children) {
    try {
      if (commandLine.test(readFileSync(`/proc/${child}/cmdline`, "latin1").replaceAll("\0", " "))) return Number(child);
    } catch {
      // gone
    }
  }
  return undefined;
}

export class DaemonProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<DaemonProcess> {
    const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, CLI, "serve", "--listen", "ws://127.0.0.1:0", "--log-level", "warn", ...args], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env },
    });
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`daemon exited with ${code}`)));
    });
    return new DaemonProcess(child, url);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /**
   * `execmux serve`, the process host it started (it holds the sessions) and
   * the daemon the host forked (it listens on the port): what the daemon
   * costs is what all three cost.
   */
  private pids(): number[] {
    const host = childOf(this.pid, /host-main/);
    const front = host === undefined ? undefined : childOf(host, / serve\b/);
    return [this.pid, ...(host === undefined ? [] : [host]), ...(front === undefined ? [] : [front])];
  }

  /** Resident set size in bytes, from /proc, of the daemon, its host and launcher. */
  rss(): number {
    let bytes = 0;
    for (const pid of this.pids()) {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      bytes += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    }
    return bytes;
  }

  /** CPU time used so far (user + system), in seconds, by the daemon, its host and launcher. */
  cpuSeconds(): number {
    let seconds = 0;
    for (const pid of this.pids()) {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      seconds += (Number(fields[11]) + Number(fields[12])) / 100;
    }
    return seconds;
  }

  /** One metric's value from /metrics. */
  async metric(name: string): Promise<number> {
    const text = await (await fetch(this.url.replace("ws://", "http://") + "/metrics")).text();
    const match = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
    return match ? Number(match[1]) : NaN;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGTERM");
    await exited;
  }
}
