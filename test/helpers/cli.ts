/** Runs the real `execmux` CLI as a child process. */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";

export const CLI = fileURLToPath(new URL("../../server/dist/cli.js", import.meta.url));

const started = new Set<ChildProcess>();
afterEach(() => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  started.clear();
});

export interface RunningDaemon {
  child: ChildProcess;
  url: string;
  stdoutLines: string[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `execmux serve` (killed after the test if still running), without waiting for anything. */
export function launchServe(args: string[], env: NodeJS.ProcessEnv = {}): Omit<RunningDaemon, "url" | "stdoutLines"> {
  const child = spawn(process.execPath, [CLI, "serve", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  started.add(child);
  let stderr = "";
  child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, stderr: () => stderr, exited };
}

/** Starts `execmux serve` and resolves once it printed its URL. */
export async function spawnDaemon(args: string[] = ["--listen", "ws://127.0.0.1:0"], env: NodeJS.ProcessEnv = {}): Promise<RunningDaemon> {
  const { child, stderr, exited } = launchServe(args, env);
  const stdoutLines: string[] = [];
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on("line", (line) => {
      stdoutLines.push(line);
      resolve(line);
    });
    void exited.then(({ code }) => reject(new Error(`daemon exited (${code}) before printing its URL: ${stderr()}`)));
  });
  return { child, url, stdoutLines, stderr, exited };
}

/** Runs the CLI to completion (in `cwd` if given), with `input` on its stdin when given (otherwise /dev/null). */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input?: string,
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      ...(cwd ? { cwd } : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (data: Buffer) => (stdout += data.toString()));
    child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** A quiet daemon of its own on a free port, with its pid (for RSS and /proc checks). */
export async function spawnTestDaemon(extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<RunningDaemon & { pid: number }> {
  const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "silent", ...extra], env);
  return { ...daemon, pid: daemon.child.pid! };
}
