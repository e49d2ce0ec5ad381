/**
 * Installing execmux as a user installs it from npm. The three packages are
 * packed (`npm pack`, whose prepack builds the server's static process host)
 * and published to a private registry on loopback (Verdaccio, pinned and
 * installed by scripts/ensure-verdaccio.mjs); an empty directory whose .npmrc
 * points the @execmux scope there then runs
 * `npm install @execmux/client @execmux/server` (everything else comes from
 * the usual registry), with no C compiler on its PATH. There
 * `npx execmux serve` starts the daemon on the prebuilt host and runs a
 * process on a PTY and one on pipes, and the README's SDK example, saved as
 * example.mts, type-checks against the installed types and runs with
 * `npx tsx`, as the README says. On a platform the package has no host for,
 * `execmux serve` stops with one line while the client commands work.
 * Slow (an `npm install`, from the npm cache where it can).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { isRunning } from "./helpers/procfs.js";
import { publishPackages, startRegistry } from "./helpers/registry.js";
// @ts-expect-error: a plain .mjs script without types.
import { elfInfo } from "../scripts/elf-info.mjs";

const repository = fileURLToPath(new URL("..", import.meta.url));
/** A bound, not an expectation. */
const INSTALL_TIMEOUT_MS = 480_000;
const DEFAULT_URL = "ws://127.0.0.1:7373";
/** C and C++ compilers by their usual names (cc, gcc-12, x86_64-linux-gnu-g++, clang++-16, ...). */
const COMPILER = /(^|-)(cc|c\+\+|c89|c99|cpp|gcc|g\+\+|clang|clang\+\+|tcc|icx|nvcc)(-[\d.]+)?$/;
/** Makes Node report another CPU architecture: a machine the package carries no host for. */
const AS_ARM64 = "--import=data:text/javascript,Object.defineProperty(process,'arch',{value:'arm64'})"; // NODE_OPTIONS would unquote double quotes
/** And another operating system. */
const AS_MACOS = "--import=data:text/javascript,Object.defineProperty(process,'platform',{value:'darwin'})";

let workspace: string;
let app: string;
let server: string;
let registryUrl: string;
let stopRegistry: (() => void) | undefined;
let install: { code: number | null; stdout: string; stderr: string };
/** This machine's PATH with every C compiler left out: what the install and the daemon run with. */
let noCompilerPath: string;
const started: ChildProcess[] = [];

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("EXECMUX_") && name !== "CC" && name !== "CXX"));
  // The npm cache serves what it has; the registry is asked only for what it lacks.
  return { ...clean, PATH: noCompilerPath, npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false", ...extra };
};

function run(command: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd, env: env(extra), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data: Buffer) => (stdout += data.toString()));
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A directory of links to everything on this machine's PATH except the C
 * compilers, first name wins as on PATH: the same tools, npm and node, but
 * nothing that could build a native module.
 */
function pathWithoutCompilers(directory: string): string {
  mkdirSync(directory);
  for (const entry of (process.env.PATH ?? "").split(":")) {
    let names: string[];
    try {
      names = readdirSync(entry);
    } catch {
      continue;
    }
    for (const name of names) {
      if (COMPILER.test(name) || existsSync(join(directory, name))) continue;
      symlinkSync(join(entry, name), join(directory, name));
    }
  }
  return directory;
}

/** The README's SDK example: the first TypeScript block that connects and starts a process. */
function sdkExample(): string {
  const readme = readFileSync(join(repository, "README.md"), "utf8");
  const example = [...readme.matchAll(/```ts\n(import [\s\S]*?)```/g)].map((match) => match[1]!).find((source) => source.includes("client.start("));
  if (example === undefined) throw new Error("README.md has no SDK example (a ```ts block that imports and calls client.start)");
  return example;
}

/** Starts `npx execmux serve` on a free port in the app; resolves with its URL (or rejects with its stderr). */
async function serve(extra: NodeJS.ProcessEnv = {}) {
  const daemon = spawn("npx", ["execmux", "serve", "--listen", "ws://127.0.0.1:0"], { cwd: app, env: env(extra), stdio: ["ignore", "pipe", "pipe"], detached: true });
  started.push(daemon);
  const output = { stderr: "" };
  daemon.stderr!.on("data", (data: Buffer) => (output.stderr += data.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => daemon.once("exit", (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: daemon.stdout! }).on("line", (line) => line.startsWith("ws://") && resolve(line));
    void exited.then(({ code }) => reject(new Error(`npx execmux serve exited ${code}: ${output.stderr}`)));
  });
  return { daemon, url, exited, output };
}

/** Ctrl-C in a terminal signals the whole foreground group: npx ends by the signal, the daemon shuts down. */
async function interrupt({ daemon, exited, output }: Awaited<ReturnType<typeof serve>>) {
  process.kill(-daemon.pid!, "SIGINT");
  expect(await exited).toEqual({ code: null, signal: "SIGINT" });
  await vi.waitFor(() => expect(output.stderr).toContain('"msg":"shutting down"'));
  // Every execmux process that logged (launcher, daemon) is gone, and the process host with them.
  const pids = [...new Set([...output.stderr.matchAll(/"pid":(\d+)/g)].map((match) => Number(match[1])))];
  expect(pids.length).toBeGreaterThan(0);
  await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]));
}

/** Pids of the processes running the executable at `path`. */
function runningExecutable(path: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/exe`) === path;
      } catch {
        return false;
      }
    })
    .map(Number);
}

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), "execmux-registry-"));
  noCompilerPath = pathWithoutCompilers(join(workspace, "path"));
  const registry = await startRegistry(join(workspace, "registry"), env());
  stopRegistry = registry.stop;
  registryUrl = registry.url;
  // Packing builds the static host with this machine's compiler: the release's machine has one.
  publishPackages(registry, join(workspace, "release"), { ...env(), PATH: process.env.PATH });

  app = join(workspace, "app");
  server = join(app, "node_modules/@execmux/server");
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

  it("had no C compiler on its PATH, where this machine has one", async () => {
    const lookup = "for name in cc gcc c++ g++ clang cpp; do command -v $name; done";
    expect((await run("/bin/sh", ["-c", lookup], app, { PATH: process.env.PATH })).stdout).not.toBe("");
    const without = await run("/bin/sh", ["-c", lookup], app);
    expect(without.stdout + without.stderr).toBe("");
    expect(without.code).not.toBe(0);
  });

  it("runs no install script and warns of none: no package has one, node-pty is gone", () => {
    expect(install.stderr).not.toMatch(/install.scripts|allowScripts/i);
    const lock = JSON.parse(readFileSync(join(app, "package-lock.json"), "utf8")) as { packages: Record<string, { hasInstallScript?: boolean }> };
    expect(Object.keys(lock.packages).filter((path) => path.endsWith("/node-pty"))).toEqual([]);
    expect(Object.entries(lock.packages).filter(([, entry]) => entry.hasInstallScript).map(([path]) => path)).toEqual([]);
  });

  it("carries the process host prebuilt for this platform, static, and no build of it", () => {
    const prebuilt = join(server, "native/prebuilt", `${process.platform}-${process.arch}`, "execmux-host");
    expect(elfInfo(prebuilt)).toEqual({ arch: process.arch, static: true });
    expect(existsSync(join(server, "native/bin"))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(server, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.os).toBeUndefined();
    expect(manifest.cpu).toBeUndefined();
  });

  it("runs `npx execmux serve` on the prebuilt host: a PTY, pipes, the README's SDK example with `npx tsx`; stops on Ctrl-C", async () => {
    const prebuilt = join(server, "native/prebuilt", `${process.platform}-${process.arch}`, "execmux-host");
    const served = await serve();
    // A private host (a port-0 daemon keeps one of its own), from the package's prebuilt file.
    await vi.waitFor(() => expect(runningExecutable(prebuilt).length).toBeGreaterThan(0));

    // `tty` names its terminal on a PTY and says there is none on pipes.
    writeFileSync(
      join(app, "terminals.mjs"),
      [
        'import { connect } from "@execmux/client";',
        `const client = await connect(${JSON.stringify(served.url)});`,
        "for (const tty of [true, false]) {",
        '  const handle = await client.start({ argv: ["tty"], tty });',
        '  let text = "";',
        "  for await (const { data } of handle) text += Buffer.from(data).toString();",
        "  console.log(JSON.stringify({ tty, text: text.trim(), code: await handle.wait() }));",
        "}",
        "client.close();",
        "",
      ].join("\n"),
    );
    const terminals = await run(process.execPath, ["terminals.mjs"], app);
    expect(terminals.stderr).toBe("");
    const [pty, pipes] = terminals.stdout.trim().split("\n").map((line) => JSON.parse(line) as { tty: boolean; text: string; code: number });
    expect(pty).toEqual({ tty: true, text: expect.stringMatching(/^\/dev\/pts\/\d+$/), code: 0 });
    expect(pipes).toEqual({ tty: false, text: "not a tty", code: 1 });

    writeFileSync(join(app, "example.mts"), sdkExample().replaceAll(DEFAULT_URL, served.url));
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

    await interrupt(served);
    await vi.waitFor(() => expect(runningExecutable(prebuilt)).toEqual([]));
  });

  it("on a platform it carries no host for, `execmux serve` stops with one line naming it; the client commands work; a build from source serves", async () => {
    const refused = await run("npx", ["execmux", "serve", "--listen", "ws://127.0.0.1:0"], app, { NODE_OPTIONS: AS_ARM64 });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    // Besides JSON log lines, stderr is one line.
    const lines = refused.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("{"));
    expect(lines).toEqual([expect.stringMatching(/^execmux: no process host for linux-arm64 \(this @execmux\/server carries a prebuilt one for linux-x64 only\): build it from source with a C compiler, mkdir -p \S+ && cc /)]);

    const elsewhere = await run("npx", ["execmux", "serve", "--listen", "ws://127.0.0.1:0"], app, { NODE_OPTIONS: AS_MACOS });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("{"))).toEqual([
      `execmux: the daemon (execmux serve) runs on Linux only, not on darwin-${process.arch}: its process host is Linux code; the client commands (exec, ps, attach, mcp) and @execmux/client work here against a daemon on Linux`,
    ]);

    // A daemon elsewhere (here: this machine's own) serves the client commands on both.
    const served = await serve();
    for (const NODE_OPTIONS of [AS_ARM64, AS_MACOS]) {
      const exec = await run("npx", ["execmux", "exec", "--url", served.url, "--", "echo", "from the daemon"], app, { NODE_OPTIONS });
      expect(exec).toEqual({ code: 0, stdout: "from the daemon\n", stderr: "" });
    }
    await interrupt(served);

    // The line's command, run where a compiler is, builds a host that serves there.
    const build = /build it from source with a C compiler, (mkdir .*?) \(in a clone/.exec(lines[0]!)![1]!;
    execFileSync("/bin/sh", ["-c", build], { cwd: app, env: { ...process.env }, stdio: ["ignore", "ignore", "pipe"] });
    expect(elfInfo(join(server, "native/bin/execmux-host")).arch).toBe(process.arch);
    const fromSource = await serve({ NODE_OPTIONS: AS_ARM64 });
    await vi.waitFor(() => expect(runningExecutable(join(server, "native/bin/execmux-host")).length).toBeGreaterThan(0));
    await interrupt(fromSource);
  });
});
