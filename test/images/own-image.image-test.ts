/**
 * The recipe for adding execmux to one's own sandbox image
 * (docker/own-image.Dockerfile), built with podman on a plain Debian image
 * standing in for the sandbox's. The packages come from npm as the recipe
 * says, here a registry on loopback that holds ours (packed here, so with
 * the process host built static by their prepack) and passes the rest on
 * from npm. The result serves a client with a token: pipes, a PTY, and a
 * sandboxed start with the flags docs/containers.md gives.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type ExecmuxClient } from "@execmux/client";
import { freePort } from "../helpers/free-port.js";
import { publishPackages, startRegistry, type LocalRegistry } from "../helpers/registry.js";
import { ensureBaseImages, podman, repository, waitReady } from "./podman.js";

const IMAGE = "localhost/execmux-image-test:own";
const token = randomBytes(32).toString("hex");
let workspace: string;
let registry: LocalRegistry | undefined;
const containers: string[] = [];

async function output(client: ExecmuxClient, options: Parameters<ExecmuxClient["start"]>[0]): Promise<{ code: number; text: string }> {
  const handle = await client.start(options);
  let text = "";
  handle.onText((chunk) => (text += chunk));
  return { code: await handle.wait(), text };
}

beforeAll(async () => {
  ensureBaseImages();
  workspace = mkdtempSync(join(tmpdir(), "execmux-own-image-"));
  registry = await startRegistry(join(workspace, "registry"), process.env, { proxyNpm: true });
  publishPackages(registry, join(workspace, "release"), process.env);
  // The build reaches the registry on the host's loopback.
  podman(["build", "--format", "docker", "--network", "host", "--build-arg", `NPM_CONFIG_REGISTRY=${registry.url}`, "--file", "docker/own-image.Dockerfile", "--tag", IMAGE, "docker"], { cwd: repository });
}, 1_200_000);

afterAll(() => {
  registry?.stop();
  for (const name of containers) podman(["rm", "--force", "--time", "0", name]);
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

describe("execmux added to a Debian image by the recipe", () => {
  it("installed with no compiler and no install script: the package's prebuilt process host is the one native binary", () => {
    const lookup = "for c in cc gcc g++ make python3; do command -v $c; done; find / -xdev \\( -name '*.node' -o -name prebuilds -o -name execmux-host \\) -print; for c in execmux bwrap tini; do command -v $c; done";
    const found = podman(["run", "--rm", IMAGE, "sh", "-c", lookup]);
    expect(found.trim().split("\n")).toEqual([`/usr/local/lib/node_modules/@execmux/server/native/prebuilt/linux-${process.arch}/execmux-host`, "/usr/local/bin/execmux", "/usr/bin/bwrap", "/usr/bin/tini"]);
  });

  it("serves a client with a token: pipes, a PTY, and a sandboxed start", async () => {
    const port = await freePort();
    const name = `execmux-own-image-test-${process.pid}`;
    const security = ["--security-opt", "unmask=ALL"];
    podman(["run", "--detach", "--name", name, "--publish", `127.0.0.1:${port}:7373`, "--env", `EXECMUX_TOKEN=${token}`, ...security, IMAGE, "tini", "--", "execmux", "serve", "--listen", "ws://0.0.0.0:7373"]);
    containers.push(name);
    await waitReady(port);
    const client = await connect(`ws://127.0.0.1:${port}`, { token, reconnect: false });
    expect(await output(client, { argv: ["sh", "-c", "echo piped; exit 4"], cwd: "/tmp" })).toEqual({ code: 4, text: "piped\n" });
    expect(await output(client, { argv: ["sh", "-c", "tty"], tty: true, cwd: "/tmp" })).toMatchObject({ code: 0, text: expect.stringMatching(/^\/dev\/pts\/\d+\r\n$/) });
    expect(await output(client, { argv: ["sh", "-c", "touch /tmp/inside && touch /outside 2>&1; echo $?"], cwd: "/tmp", sandbox: "workspace-write" })).toMatchObject({ text: expect.stringMatching(/Read-only file system\n1\n$/) });
    client.close();
    podman(["stop", "--time", "10", name]);
    expect(podman(["inspect", "--format", "{{.State.ExitCode}}", name]).trim()).toBe("0");
  });
});
