/** The real daemon, as a separate process, with its RSS, CPU and metrics readable. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../server/dist/cli.js", import.meta.url));

/** The process host a daemon started: its child running host-main (server/src/host). */
function hostOf(daemonPid: number): number | undefined {
  let children: string[];
  try {
    children = readFileSync(`/proc/${daemonPid}/task/${daemonPid}/children`, "latin1").trim().split(/\s+/).filter(Boolean);
  } catch {
    return undefined;
  }
  for (const child of children) {
    try {
      if (readFileSync(`/proc/${child}/cmdline`, "latin1").includes("host-main")) return Number(child);
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
    const child = spawn(process.execPath, [CLI, "serve", "--listen", "ws://127.0.0.1:0", "--log-level", "warn", ...args], {
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
   * The daemon and the process host `execmux serve` started (it holds the
   * sessions): what the daemon costs is what both cost.
   */
  private pids(): number[] {
    const host = hostOf(this.pid);
    return host === undefined ? [this.pid] : [this.pid, host];
  }

  /** Resident set size in bytes, from /proc, of the daemon and its host. */
  rss(): number {
    let bytes = 0;
    for (const pid of this.pids()) {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      bytes += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    }
    return bytes;
  }

  /** CPU time used so far (user + system), in seconds, by the daemon and its host. */
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
