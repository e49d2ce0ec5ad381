/**
 * What the container image runs, tested outside a container (no Docker
 * engine here): the Dockerfile's essentials, the entrypoint, SIGTERM
 * handling, an unprivileged user, and the health check command.
 */
import { spawn } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { connect } from "@execmux/client";
import { freePort } from "./helpers/free-port.js";
import { hostPidOf, isRunning } from "./helpers/procfs.js";
import { scratchDirectory } from "./helpers/scratch.js";

const path = (relative: string) => fileURLToPath(new URL(`../${relative}`, import.meta.url));
const dockerfile = readFileSync(path("docker/Dockerfile"), "utf8");
const instructions = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith("#"));

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** Runs docker/entrypoint.sh with `args` (optionally through `setpriv` as another user) and waits for its URL line. */
async function runEntrypoint(env: Record<string, string>, asUser?: number, args: string[] = []) {
  const entrypoint = [path("docker/entrypoint.sh"), ...args];
  // A /tmp of its own, as a container has (the entrypoint leaves the daemon's arguments there); open to the other user too.
  const temporary = scratchDirectory("entrypoint");
  chmodSync(temporary, 0o1777);
  env = { TMPDIR: temporary, ...env };
  const command = asUser === undefined ? entrypoint : ["setpriv", `--reuid=${asUser}`, `--regid=${asUser}`, "--clear-groups", ...entrypoint];
  const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], cwd: "/tmp" });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    void exited.then((code) => reject(new Error(`entrypoint exited ${code}: ${stderr}`)));
  });
  return { child, url, exited };
}

describe("Dockerfile", () => {
  it("is multi-stage, runs as a non-root user under tini with a health check, and bakes in no secret", () => {
    expect(instructions.filter((line) => line.startsWith("FROM ")).length).toBeGreaterThanOrEqual(2);
    const users = instructions.filter((line) => line.startsWith("USER "));
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^USER\s+(root|0)(:|$)/);
    expect(instructions.some((line) => /^HEALTHCHECK .*CMD/.test(line))).toBe(true);
    expect(instructions.find((line) => line.startsWith("ENTRYPOINT"))).toMatch(/tini/);
    expect(instructions).toContain("EXPOSE 7373");
    for (const line of instructions.filter((line) => /^(ENV|ARG) /.test(line))) {
      expect(line, line).not.toMatch(/(TOKEN|SECRET|PASSWORD|_KEY)\s*=/i);
    }
    expect(dockerfile).not.toMatch(/COPY[^\n]*(\.env|\.pem|token)/i);
  });
});

/** Runs docker/healthcheck.mjs as Docker would: the container's environment, none of the daemon's arguments. */
function healthCheck(env: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const probe = spawn(process.execPath, [path("docker/healthcheck.mjs")], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    probe.stdout.on("data", (data: Buffer) => (stdout += data.toString()));
    probe.once("close", (code) => resolve({ code, stdout }));
  });
}

describe("container entrypoint", () => {
  it("starts the daemon, and on SIGTERM kills every child and exits 0", async () => {
    const { child, url, exited } = await runEntrypoint({ EXECMUX_LISTEN: "ws://127.0.0.1:0", EXECMUX_KILL_GRACE_MS: "300" });
    const client = await connect(url, { reconnect: false });
    const handle = await client.start({ argv: ["sh", "-c", "trap '' TERM; sleep 300 & echo $$ $!; wait"] });
    const pids = await new Promise<number[]>((resolve) =>
      handle.onOutput((event) => resolve(Buffer.from(event.data).toString().trim().split(" ").map((pid) => hostPidOf(Number(pid), child.pid!)))),
    );
    expect(pids.every(isRunning)).toBe(true);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]));
  });

  it("runs as an unprivileged user, and so do the processes it starts", async () => {
    const { url, child, exited } = await runEntrypoint({ EXECMUX_LISTEN: "ws://127.0.0.1:0", HOME: "/tmp" }, 65534);
    const client = await connect(url, { reconnect: false });
    for (const tty of [false, true]) {
      const handle = await client.start({ argv: ["id", "-u"], tty, cwd: "/tmp" });
      let output = "";
      handle.onOutput((event) => (output += Buffer.from(event.data).toString()));
      expect(await handle.wait()).toBe(0);
      expect(output.trim()).toBe("65534");
    }
    client.close();
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("has a health check command that passes against a ready daemon and fails otherwise", async () => {
    const containerEnv = { EXECMUX_LISTEN: `ws://127.0.0.1:${await freePort()}`, TMPDIR: scratchDirectory("health") };
    const { child, exited } = await runEntrypoint(containerEnv);
    expect(await healthCheck(containerEnv)).toMatchObject({ code: 0, stdout: expect.stringMatching(/\/readyz: HTTP 200\n$/) });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(await healthCheck(containerEnv)).toMatchObject({ code: 1 });
  });

  it("probes the daemon where `docker run` flags or a config file put it, not where EXECMUX_LISTEN says", async () => {
    const [byFlag, byFile, elsewhere] = [await freePort(), await freePort(), await freePort()];
    // The image's EXECMUX_LISTEN points at a port nothing listens on.
    const containerEnv = { EXECMUX_LISTEN: `ws://127.0.0.1:${elsewhere}`, TMPDIR: scratchDirectory("health") };
    const flagged = await runEntrypoint(containerEnv, undefined, ["--listen", `ws://127.0.0.1:${byFlag}`]);
    expect(await healthCheck(containerEnv)).toMatchObject({ code: 0, stdout: `http://127.0.0.1:${byFlag}/readyz: HTTP 200\n` });
    flagged.child.kill("SIGTERM");
    await flagged.exited;

    const directory = scratchDirectory("health");
    const configFile = `${directory}/execmux.json`;
    writeFileSync(configFile, JSON.stringify({ listen: `ws://127.0.0.1:${byFile}` }));
    const fileEnv = { TMPDIR: directory, EXECMUX_CONFIG: configFile };
    const configured = await runEntrypoint(fileEnv);
    expect(await healthCheck(fileEnv)).toMatchObject({ code: 0, stdout: `http://127.0.0.1:${byFile}/readyz: HTTP 200\n` });
    configured.child.kill("SIGTERM");
    await configured.exited;
  });
});
