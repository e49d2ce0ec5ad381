/**
 * Container images built and run with podman, as docs/containers.md builds
 * them. Without a registry, the base images come from docker/local-base.sh
 * (Debian's archive and this machine's Node), made once if they are missing.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { vi, expect } from "vitest";

export const repository = fileURLToPath(new URL("../..", import.meta.url));

/**
 * crun refuses to create containers on a host whose cgroups are mounted in
 * hybrid mode (v1 controllers beside a v2 hierarchy that has controllers):
 * "cgroups in hybrid mode not supported". runc does not.
 */
function runtimeArgs(): string[] {
  const hybrid = existsSync("/sys/fs/cgroup/unified/cgroup.controllers");
  return hybrid && existsSync("/usr/sbin/runc") ? ["--runtime", "runc"] : [];
}

/** CAP_SYS_RESOURCE (bit 24) in this process's effective set. */
function mayRaiseLimits(): boolean {
  const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "0";
  return (BigInt(`0x${effective}`) & (1n << 24n)) !== 0n;
}

/**
 * podman gives a container higher open-file and process limits than the
 * host's; a runtime without CAP_SYS_RESOURCE cannot set them and fails
 * ("error setting rlimit type 7: operation not permitted"). There, `run`
 * gets limits it may set.
 */
function withLimits(args: string[]): string[] {
  if (args[0] !== "run" || mayRaiseLimits()) return args;
  const [, hard] = /^Max open files\s+\d+\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8")) ?? [];
  return ["run", "--ulimit", `nofile=${hard}:${hard}`, "--ulimit", "nproc=4096:4096", ...args.slice(1)];
}

export function podman(args: string[], options: { cwd?: string } = {}): string {
  return execFileSync("podman", [...runtimeArgs(), ...withLimits(args)], { cwd: options.cwd ?? repository, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 });
}

/** podman, resolving with its exit code and output instead of throwing. */
export function podmanRun(args: string[], options: { cwd?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("podman", [...runtimeArgs(), ...withLimits(args)], { cwd: options.cwd ?? repository, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data: Buffer) => (stdout += data.toString()));
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The base images docker/Dockerfile names, made by docker/local-base.sh when the machine has none. */
export function ensureBaseImages(): void {
  try {
    execFileSync("podman", ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error("podman is missing: apt-get install podman runc debootstrap (the image tests build with it)");
  }
  const present = (name: string) => podman(["images", "--quiet", name]).trim() !== "";
  if (present("node:20-bookworm-slim") && present("debian:bookworm-slim")) return;
  execFileSync(`${repository}docker/local-base.sh`, { stdio: "inherit" });
}

/** Waits until the container's daemon answers /readyz on the published port. */
export async function waitReady(port: number): Promise<void> {
  await vi.waitFor(async () => expect((await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status).toBe(200), { timeout: 60_000, interval: 250 });
}
