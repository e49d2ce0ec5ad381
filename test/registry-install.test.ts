/**
 * Installing execmux as a user installs it from npm. The three packages are
 * packed (`npm pack`) and published to a private registry on loopback
 * (Verdaccio, pinned and installed by scripts/ensure-verdaccio.mjs); an empty
 * directory whose .npmrc points the @execmux scope there then runs
 * `npm install @execmux/client @execmux/server` (everything else comes from
 * the usual registry). There `npx execmux serve` starts the daemon, and the
 * README's SDK example, saved as example.mts, type-checks against the
 * installed types and runs with `npx tsx`, as the README says.
 * Slow (an `npm install`, from the npm cache where it can).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { isRunning } from "./helpers/procfs.js";
import { publishPackages, startRegistry } from "./helpers/registry.js";

const repository = fileURLToPath(new URL("..", import.meta.url));
/** A bound, not an expectation: the install builds node-pty, a minute or more on a busy 2-core machine. */
const INSTALL_TIMEOUT_MS = 480_000;
const DEFAULT_URL = "ws://127.0.0.1:7373";

let workspace: string;
let app: string;
let registryUrl: string;
let stopRegistry: (() => void) | undefined;
let install: { code: number | null; stdout: string; stderr: string };
const started: ChildProcess[] = [];

const env = (): NodeJS.ProcessEnv => {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("EXECMUX_")));
  // The npm cache serves what it has; the registry is asked only for what it lacks.
  return { ...clean, npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false" };
};

function run(command: string, args: string[], cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd, env: env(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data: Buffer) => (stdout += data.toString()));
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The README's SDK example: the first TypeScript block that connects and starts a process. */
function sdkExample(): string {
  const readme = readFileSync(join(repository, "README.md"), "utf8");
  const example = [...readme.matchAll(/```ts\n(import [\s\S]*?)```/g)].map((match) => match[1]!).find((source) => source.includes("client.start("));
  if (example === undefined) throw new Error("README.md has no SDK example (a ```ts block that imports and calls client.start)");
  return example;
}

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), "execmux-registry-"));
  const registry = await startRegistry(join(workspace, "registry"), env());
  stopRegistry = registry.stop;
  registryUrl = registry.url;
  publishPackages(registry, join(workspace, "release"), env());

  app = join(workspace, "app");
  registry.npmrc(app);
  install = await run("npm", ["install", "@execmux/client", "@execmux/server"], app);
  expect(install.code, install.stderr).toBe(0);
}, INSTALL_TIMEOUT_MS);

afterAll(() => {
  stopRegistry?.();
  for (const child of started) {
    if (child.exitCode !== null || child.signalCode !== null || !child.pid) continue;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // The group has gone already.
    }
  }
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

describe("@execmux/client and @execmux/server installed from a registry into an empty directory", () => {
  it("came from the registry, with a license and a README in each package", () => {
    const version = (JSON.parse(readFileSync(join(repository, "server/package.json"), "utf8")) as { version: string }).version;
    for (const name of ["shared", "client", "server"]) {
      const installed = join(app, "node_modules/@execmux", name);
      expect((JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { version: string }).version).toBe(version);
      expect(readdirSync(installed)).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json", "dist"]));
    }
    const lock = JSON.parse(readFileSync(join(app, "package-lock.json"), "utf8")) as { packages: Record<string, unknown> };
    expect(Object.keys(lock.packages)).toEqual(expect.arrayContaining(["node_modules/@execmux/shared", "node_modules/@execmux/client", "node_modules/@execmux/server"]));
    expect(registryUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it("warns of no engine the supported Node does not meet", () => {
    expect(install.stderr).not.toContain("EBADENGINE");
  });

  it("asks to approve node-pty's install script, which the README's command does", async () => {
    expect(install.stderr).toContain("node-pty@");
    expect(install.stderr).toContain("install scripts not yet covered by allowScripts");
    const approve = await run("npm", ["install-scripts", "approve", "node-pty"], app);
    expect(approve.code, approve.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean> };
    expect(Object.entries(manifest.allowScripts ?? {})).toEqual([[expect.stringMatching(/^node-pty(@|$)/), true]]);
    const again = await run("npm", ["install"], app);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("install scripts not yet covered");
  });

  it("runs `npx execmux serve`, the README's SDK example with `npx tsx` against it, and stops on Ctrl-C", async () => {
    const daemon = spawn("npx", ["execmux", "serve", "--listen", "ws://127.0.0.1:0"], { cwd: app, env: env(), stdio: ["ignore", "pipe", "pipe"], detached: true });
    started.push(daemon);
    let stderr = "";
    daemon.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => daemon.once("exit", (code, signal) => resolve({ code, signal })));
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: daemon.stdout! }).on("line", (line) => line.startsWith("ws://") && resolve(line));
      void exited.then(({ code }) => reject(new Error(`npx execmux serve exited ${code}: ${stderr}`)));
    });

    writeFileSync(join(app, "example.mts"), sdkExample().replaceAll(DEFAULT_URL, url));
    // The example's types come from the installed package (Node's from the repository's @types/node).
    const typescript = join(repository, "node_modules/typescript/bin/tsc");
    const typeRoots = join(repository, "node_modules/@types");
    const check = await run(process.execPath, [typescript, "--noEmit", "--strict", "--module", "nodenext", "--target", "es2022", "--typeRoots", typeRoots, "--types", "node", "example.mts"], app);
    expect(check.stdout + check.stderr).toBe("");
    expect(check.code).toBe(0);

    const example = await run("npx", ["--yes", "tsx", "example.mts"], app);
    expect(example.stderr).toBe("");
    expect(example.stdout).toMatch(/^exit code 0$/m);
    expect(example.stdout).toMatch(/^shell exit code \d+$/m);
    expect(example.code).toBe(0);

    // Ctrl-C in a terminal signals the whole foreground group: npx ends by the signal, the daemon shuts down.
    process.kill(-daemon.pid!, "SIGINT");
    expect(await exited).toEqual({ code: null, signal: "SIGINT" });
    await vi.waitFor(() => expect(stderr).toContain('"msg":"shutting down"'));
    // Every execmux process that logged (launcher, process host, daemon) is gone.
    const pids = [...new Set([...stderr.matchAll(/"pid":(\d+)/g)].map((match) => Number(match[1])))];
    expect(pids.length).toBeGreaterThan(0);
    await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]));
  });
});
