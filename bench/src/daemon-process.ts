/** The real daemon, as a separate process, with its RSS, CPU and metrics readable. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../server/dist/cli.js", import.meta.url));

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

  /** Resident set size in bytes, from /proc. */
  rss(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  }

  /** CPU time used so far (user + system), in seconds. */
  cpuSeconds(): number {
    const stat = readFileSync(`/proc/${this.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
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
