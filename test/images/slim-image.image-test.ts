/**
 * docker/Dockerfile built with podman (`--format docker`, as
 * docs/containers.md says) and run as a user runs it: with a token, the
 * health check, processes as the unprivileged user, on pipes and a PTY,
 * SIGTERM to stop; and sandboxed starts, refused under podman's default
 * confinement and run with the flag the docs give.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, RpcRequestError, type ExecmuxClient } from "@execmux/client";
import { freePort } from "../helpers/free-port.js";
import { handshake } from "../helpers/http.js";
import { ensureBaseImages, podman, podmanRun, waitReady } from "./podman.js";

const IMAGE = "localhost/execmux-image-test:slim";
const token = randomBytes(32).toString("hex");
const containers: string[] = [];

async function runContainer(securityOptions: string[] = []): Promise<{ name: string; url: string }> {
  const port = await freePort();
  const name = `execmux-image-test-${process.pid}-${containers.length}`;
  podman(["run", "--detach", "--name", name, "--publish", `127.0.0.1:${port}:7373`, "--env", `EXECMUX_TOKEN=${token}`, ...securityOptions, IMAGE]);
  containers.push(name);
  await waitReady(port);
  return { name, url: `ws://127.0.0.1:${port}` };
}

async function output(client: ExecmuxClient, options: Parameters<ExecmuxClient["start"]>[0]): Promise<{ code: number; text: string }> {
  const handle = await client.start(options);
  let text = "";
  handle.onText((chunk) => (text += chunk));
  return { code: await handle.wait(), text };
}

beforeAll(() => {
  ensureBaseImages();
  podman(["build", "--format", "docker", "--file", "docker/Dockerfile", "--tag", IMAGE, "."]);
}, 1_200_000);

afterAll(() => {
  for (const name of containers) podman(["rm", "--force", "--time", "0", name]);
});

describe("the slim image", () => {
  it("keeps its health check, and carries one native binary, the process host, and no compiler or npm", () => {
    const healthcheck = JSON.parse(podman(["image", "inspect", "--format", "{{json .Config.Healthcheck}}", IMAGE])) as { Test?: string[] } | null;
    expect(healthcheck?.Test).toEqual(["CMD", "node", "/app/docker/healthcheck.mjs"]);
    expect(podman(["image", "inspect", "--format", "{{.Config.User}}", IMAGE]).trim()).toBe("node");
    const lookup = "find / -xdev \\( -name '*.node' -o -name prebuilds -o -name execmux-host \\) -print; for c in npm cc gcc g++ make python3; do command -v $c; done; true";
    const found = podman(["run", "--rm", "--entrypoint", "sh", IMAGE, "-c", lookup]);
    expect(found.trim().split("\n")).toEqual([`/app/server/native/prebuilt/linux-${process.arch}/execmux-host`]);
  });

  it("serves with a token as the unprivileged user, is healthy, and stops on SIGTERM with exit code 0", async () => {
    const { name, url } = await runContainer();
    // At rest: tini, the daemon, and its process host; nothing else.
    const listing = "for d in /proc/[0-9]*; do [ \"${d#/proc/}\" = $$ ] || tr '\\0' ' ' < $d/cmdline; echo; done";
    const commands = podman(["exec", name, "sh", "-c", listing]).split("\n").filter((line) => line.trim() !== "");
    expect(commands.map((command) => command.split(" ")[0]).sort()).toEqual([`/app/server/native/prebuilt/linux-${process.arch}/execmux-host`, "/usr/bin/tini", "node"].sort());
    expect((await handshake(url)).status).toBe(401);
    const client = await connect(url, { token, reconnect: false });
    expect(await output(client, { argv: ["id", "-un"], cwd: "/home/node" })).toEqual({ code: 0, text: "node\n" });
    expect(await output(client, { argv: ["sh", "-c", "tty; exit 3"], tty: true, cwd: "/home/node" })).toMatchObject({ code: 3, text: expect.stringMatching(/^\/dev\/pts\/\d+\r\n$/) });
    client.close();
    expect((await podmanRun(["healthcheck", "run", name])).code).toBe(0);
    podman(["stop", "--time", "10", name]);
    expect(podman(["inspect", "--format", "{{.State.ExitCode}}", name]).trim()).toBe("0");
  });

  it.each([
    ["the runtime's default confinement", []],
    ["seccomp unconfined alone", ["--security-opt", "seccomp=unconfined"]],
  ])("refuses a sandboxed start under %s, saying why", async (_name, securityOptions) => {
    const { url } = await runContainer(securityOptions);
    const client = await connect(url, { token, reconnect: false });
    const error = await client.start({ argv: ["true"], cwd: "/home/node", sandbox: "workspace-write" }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RpcRequestError);
    expect((error as RpcRequestError).code).toBe(-32602);
    expect((error as RpcRequestError).message).toContain("Can't mount proc on /newroot/proc: Operation not permitted");
    client.close();
  });

  it("runs a sandboxed start with /proc unmasked (podman's seccomp profile allows the namespaces; no capability needed), confined to its writable roots", async () => {
    const { url } = await runContainer(["--security-opt", "unmask=ALL", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]);
    const client = await connect(url, { token, reconnect: false });
    const inside = await output(client, { argv: ["sh", "-c", "touch /home/node/inside && echo ok"], cwd: "/home/node", sandbox: "workspace-write" });
    expect(inside).toEqual({ code: 0, text: "ok\n" });
    const outside = await output(client, { argv: ["sh", "-c", "touch /app/outside 2>&1; echo $?"], cwd: "/home/node", sandbox: "workspace-write" });
    expect(outside.text).toMatch(/Read-only file system\n1\n$/);
    client.close();
  });
});
