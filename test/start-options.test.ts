/** process/start's parameters: cwd, environment policy, arg0, spawn failures. */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ErrorCode } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { WireClient } from "./helpers/wire-client.js";
import { scratchDirectory } from "./helpers/scratch.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

async function run(client: WireClient, processId: string, params: Record<string, unknown>): Promise<string> {
  await client.call("process/start", { processId, cwd: "/", env: { PATH }, tty: false, ...params });
  await client.closedOf(processId);
  return client.output(processId);
}

const envOf = (output: string) =>
  Object.fromEntries(
    output
      .split("\n")
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );

describe("cwd", () => {
  it("accepts an absolute path and a file:// URI", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    expect(await run(client, "a", { argv: ["pwd"], cwd: "/usr" })).toBe("/usr\n");
    expect(await run(client, "b", { argv: ["pwd"], cwd: pathToFileURL("/usr/bin").href })).toBe("/usr/bin\n");
  });

  it("refuses relative, foreign, missing and non-directory cwds with upstream's codes and words", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const cases: [unknown, number, string, string?][] = [
      ["tmp", ErrorCode.InvalidParams, "invalid URI: relative URL without a base"],
      ["http://host/tmp", ErrorCode.InvalidParams, "unsupported path URI scheme `http`"],
      ["file:///C:/work", ErrorCode.InvalidParams, "cwd URI `file:///C:/work` is not valid on this exec-server host: 'file:///C:/work' is invalid on 'linux'"],
      [undefined, ErrorCode.InvalidParams, "missing field `cwd`"],
      // Upstream learns these from the spawn itself.
      // With upstream 0.171's data.kind.
      ["/definitely/not/here", ErrorCode.InternalError, "No such file or directory (os error 2): working directory /definitely/not/here", "spawnNotFound"],
      ["file:///etc/passwd", ErrorCode.InternalError, "Not a directory (os error 20): working directory /etc/passwd", "spawnFailed"],
    ];
    for (const [cwd, code, message, kind] of cases) {
      const reply = await client.request("process/start", { processId: "x", argv: ["true"], env: {}, ...(cwd === undefined ? {} : { cwd }) });
      expect(reply.error).toEqual({ code, message, ...(kind ? { data: { kind } } : {}) });
    }
    // A refused start leaves the id free.
    expect(await run(client, "x", { argv: ["true"] })).toBe("");
  });
});

describe("argv and spawning", () => {
  it("refuses an empty argv and NUL bytes", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const empty = await client.request("process/start", { processId: "e", argv: [], cwd: "/", env: {} });
    expect(empty.error).toMatchObject({ code: ErrorCode.InvalidParams, message: "argv must not be empty" });
    const nul = await client.request("process/start", { processId: "n", argv: ["echo", "a\u0000b"], cwd: "/", env: {} });
    expect(nul.error?.code).toBe(ErrorCode.InvalidParams);
  });

  it("fails a missing or unexecutable program with -32603 in upstream's words on pipes and on a PTY, and frees the id", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    for (const tty of [false, true]) {
      const reply = await client.request("process/start", { processId: "m", argv: ["no-such-program-xyz"], cwd: "/", env: { PATH }, tty });
      expect(reply.error).toEqual({ code: ErrorCode.InternalError, message: "No such file or directory (os error 2)", data: { kind: "spawnNotFound" } });
      const notExecutable = await client.request("process/start", { processId: "m", argv: ["/etc/passwd"], cwd: "/", env: { PATH }, tty });
      expect(notExecutable.error).toEqual({ code: ErrorCode.InternalError, message: "Permission denied (os error 13)", data: { kind: "spawnPermissionDenied" } });
    }
    expect(await run(client, "m", { argv: ["echo", "ok"] })).toBe("ok\n");
  });

  it("sets argv[0] with arg0, on pipes and on a PTY", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const argv = ["sh", "-c", "tr '\\0' ' ' < /proc/$$/cmdline"];
    expect(await run(client, "p", { argv })).toMatch(/^sh -c /);
    expect(await run(client, "q", { argv, arg0: "renamed" })).toMatch(/^renamed -c /);
    expect(await run(client, "r", { argv, arg0: "pty-name", tty: true })).toMatch(/^pty-name -c /);
  });
});

describe("environment", () => {
  it("gives the child exactly `env` when there is no policy", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const output = await run(client, "e", { argv: ["/usr/bin/env"], env: { ONLY: "this", "__proto__": "x" } });
    expect(envOf(output)).toEqual({ ONLY: "this", __proto__: "x" });
  });

  it("applies inherit, default excludes, exclude, set, includeOnly, then the env overlay", async () => {
    Object.assign(process.env, { PLAIN_VAR: "plain", MY_API_KEY: "secret", OTHER_TOKEN: "t", EXECMUX_TOKEN: "daemon-secret" });
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const argv = ["/usr/bin/env"];

    const all = envOf(await run(client, "all", { argv, envPolicy: { inherit: "all" } }));
    expect(all.PLAIN_VAR).toBe("plain");
    expect(all).not.toHaveProperty("MY_API_KEY");
    expect(all).not.toHaveProperty("OTHER_TOKEN");
    expect(all).not.toHaveProperty("EXECMUX_TOKEN");

    const raw = envOf(await run(client, "raw", { argv, envPolicy: { inherit: "all", ignoreDefaultExcludes: true } }));
    expect(raw.MY_API_KEY).toBe("secret");
    // The daemon's own settings never reach a child, even without default excludes.
    expect(raw).not.toHaveProperty("EXECMUX_TOKEN");

    const core = envOf(await run(client, "core", { argv, envPolicy: { inherit: "core" } }));
    expect(Object.keys(core).every((name) => ["HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP"].includes(name))).toBe(true);
    expect(core.PATH).toBe(process.env.PATH);

    const shaped = envOf(
      await run(client, "shaped", {
        argv,
        env: { OVERLAY: "o", FROM_SET: "overlay-wins" },
        envPolicy: { inherit: "all", exclude: ["plain_*"], set: { FROM_SET: "set", KEPT: "k" }, includeOnly: ["from_*", "kept", "plain*", "PATH"] },
      }),
    );
    expect(shaped).toEqual({ FROM_SET: "overlay-wins", KEPT: "k", OVERLAY: "o", PATH: process.env.PATH });

    const none = envOf(await run(client, "none", { argv, env: { A: "1" }, envPolicy: { inherit: "none", set: { B: "2" } } }));
    expect(none).toEqual({ A: "1", B: "2" });
  });
});

describe("stdio of pipe processes", () => {
  it("is made of pipes, as upstream's: bash with a stdin pipe does not take it for a remote shell and read ~/.bashrc", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const home = scratchDirectory("home");
    writeFileSync(join(home, ".bashrc"), "echo 'read ~/.bashrc'\n");
    const output = await run(client, "bash", {
      argv: ["bash", "-c", "for fd in 0 1 2; do [ -p /dev/fd/$fd ] && echo pipe $fd; done"],
      env: { PATH, HOME: home, SHLVL: "0" },
      pipeStdin: true,
    });
    expect(output).toBe("pipe 0\npipe 1\npipe 2\n");
  });
});
