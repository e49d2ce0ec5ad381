/**
 * Codex's workspace-write sandbox, enforced with bubblewrap, against a real
 * daemon: every escape the issue lists is tried from inside and must fail,
 * and each test also shows the same action succeeding where the profile
 * allows it (so a broken probe cannot pass for a working sandbox).
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { codexSandbox, ErrorCode, pathToFileUri, type FileSystemSandboxContext } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

/** A directory outside every writable root of the Codex profile (/tmp and $TMPDIR are writable there). */
function outsideDirectory(): string {
  const directory = mkdtempSync("/var/tmp/execmux-outside-");
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

function project(): string {
  const directory = scratchDirectory("sandbox-project");
  mkdirSync(join(directory, ".git"));
  writeFileSync(join(directory, ".git", "config"), "[core]\n");
  return directory;
}

interface Run {
  readonly exitCode: number;
  readonly sandboxDenied: boolean;
  readonly output: string;
}

let nextId = 0;
/** Runs `script` with bash in `cwd` under `sandbox` and waits for it to close. */
async function run(client: WireClient, cwd: string, script: string, sandbox: FileSystemSandboxContext | null, extra: Record<string, unknown> = {}): Promise<Run> {
  const processId = `p${nextId++}`;
  const started = await client.call("process/start", {
    processId,
    argv: ["bash", "--noprofile", "--norc", "-c", script],
    cwd: pathToFileUri(cwd),
    env: { PATH },
    tty: false,
    sandbox,
    ...extra,
  });
  expect(started.sandboxType).toBe(sandbox ? "linuxSeccomp" : "none");
  await client.closedOf(processId);
  const exited = client.notifications(processId).find((message) => message.method === "process/exited")!;
  return { exitCode: Number(exited.params!.exitCode), sandboxDenied: exited.params!.sandboxDenied === true, output: client.output(processId) };
}

describe("sandbox escapes (workspace-write, bubblewrap)", () => {
  it("runs commands and writes inside the project, confined", async () => {
    const root = project();
    const client = await WireClient.ready((await startTestDaemon()).url);
    const result = await run(client, root, "echo made > made.txt && mkdir -p sub/dir && echo deep > sub/dir/f && cat made.txt", codexSandbox("workspace-write", root));
    expect(result).toEqual({ exitCode: 0, sandboxDenied: false, output: "made\n" });
    expect(readFileSync(join(root, "sub/dir/f"), "utf8")).toBe("deep\n");
  });

  it("cannot write outside the writable roots", async () => {
    const root = project();
    const outside = outsideDirectory();
    const client = await WireClient.ready((await startTestDaemon()).url);
    const target = join(outside, "escaped.txt");
    // Only into a directory of this test's own: a broken sandbox must not litter /etc.
    const escape = `echo x > ${target}; mkdir ${outside}/d; touch ${outside}`;
    const confined = await run(client, root, `${escape}; exit 1`, codexSandbox("workspace-write", root));
    expect(confined.output).toContain("Read-only file system");
    expect(confined.sandboxDenied).toBe(true);
    expect(readdirSync(outside)).toEqual([]);

    // The same commands without a sandbox do write there: the probe works.
    const free = await run(client, root, `echo x > ${target}`, null);
    expect(free.exitCode).toBe(0);
    expect(readFileSync(target, "utf8")).toBe("x\n");
  });

  it("cannot write through a symlink planted inside the project, nor hard-link a file in", async () => {
    const root = project();
    const outside = outsideDirectory();
    writeFileSync(join(outside, "victim"), "original\n");
    // Planted before the sandbox starts (by anyone), and planted from inside.
    symlinkSync(outside, join(root, "planted"));
    symlinkSync(join(outside, "victim"), join(root, "victim-link"));
    const client = await WireClient.ready((await startTestDaemon()).url);
    const script = [
      "echo x > planted/new.txt",
      "echo x > victim-link",
      `ln -s ${outside} inner-link && echo x > inner-link/other.txt`,
      `ln ${outside}/victim hard && echo x >> hard`,
      "cd planted/.. && echo fine > via-dotdot.txt",
      `echo x > ${root}/../../../../${outside}/dotdot.txt`,
      "exit 1",
    ].join("; ");
    const result = await run(client, root, script, codexSandbox("workspace-write", root));
    expect(result.output).toMatch(/Read-only file system/);
    expect(result.output).toMatch(/Invalid cross-device link/);
    expect(readdirSync(outside)).toEqual(["victim"]);
    expect(readFileSync(join(outside, "victim"), "utf8")).toBe("original\n");
  });

  it("cannot write into .git, nor move it out of the way", async () => {
    const root = project();
    const client = await WireClient.ready((await startTestDaemon()).url);
    const script = "echo x >> .git/config; touch .git/hooks-new; mv .git moved; rm -rf .git; ln -sf /tmp .git/link; echo ok > work.txt; exit 1";
    const result = await run(client, root, script, codexSandbox("workspace-write", root));
    expect(result.output).toContain("Read-only file system");
    expect(result.output).toMatch(/mv: cannot move '.git'.*busy/);
    expect(readdirSync(join(root, ".git"))).toEqual(["config"]);
    expect(readFileSync(join(root, ".git", "config"), "utf8")).toBe("[core]\n");
    // The rest of the project stayed writable.
    expect(readFileSync(join(root, "work.txt"), "utf8")).toBe("ok\n");
  });

  it("cannot reach a server on the host's loopback", async () => {
    const root = project();
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections++;
      socket.end("hello\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => void server.close());
    const port = (server.address() as { port: number }).port;
    const client = await WireClient.ready((await startTestDaemon()).url);
    const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`;

    const confined = await run(client, root, connect, codexSandbox("workspace-write", root));
    expect(confined.exitCode).not.toBe(0);
    expect(confined.output).toContain("Connection refused");
    expect(connections).toBe(0);

    // With the profile's network enabled, the same command reaches it.
    const withNetwork = codexSandbox("workspace-write", root);
    const open = { ...withNetwork, permissions: { ...withNetwork.permissions, network: "enabled" as const } };
    const allowed = await run(client, root, connect, open);
    expect(allowed).toMatchObject({ exitCode: 0, output: "hello\n" });
    expect(connections).toBe(1);
  });

  it("cannot see, signal or ptrace a process outside", async () => {
    const root = project();
    const client = await WireClient.ready((await startTestDaemon()).url);
    await client.call("process/start", { processId: "victim", argv: ["sleep", "600"], cwd: "/", env: { PATH }, tty: false });
    const { processes } = await client.call<{ processes: { processId: string; pid: number; state: string }[] }>("process/list", {});
    const victim = processes.find((process) => process.processId === "victim")!.pid;
    // perl's syscall: ptrace (101 on x86_64) PTRACE_ATTACH (16).
    const script = [
      `kill -TERM ${victim}; echo "kill=$?"`,
      `kill -0 ${process.pid}; echo "daemon=$?"`,
      `perl -e 'if (syscall(101, 16, $ARGV[0], 0, 0) == -1) { print "ptrace: $!\\n"; exit 0 } print "ptrace attached\\n"' ${victim}`,
      `test -e /proc/${victim} && echo visible || echo invisible`,
    ].join("; ");
    const result = await run(client, root, script, codexSandbox("workspace-write", root));
    expect(result.output).toContain("kill=1");
    expect(result.output).toContain("daemon=1");
    expect(result.output).toContain("ptrace: No such process");
    expect(result.output).toContain("invisible");
    const after = await client.call<{ processes: { processId: string; state: string }[] }>("process/list", {});
    expect(after.processes.find((process) => process.processId === "victim")?.state).toBe("running");
  });

  it("cannot read another session's files where the profile denies them", async () => {
    const root = project();
    const other = outsideDirectory();
    writeFileSync(join(other, "secret"), "other session's secret\n");
    const daemon = await startTestDaemon();
    const owner = await WireClient.ready(daemon.url);
    // The other session's process, holding its file.
    await owner.call("process/start", { processId: "holder", argv: ["sleep", "600"], cwd: other, env: { PATH }, tty: false });
    const client = await WireClient.ready(daemon.url);
    const sandbox = codexSandbox("workspace-write", root);
    const denying: FileSystemSandboxContext = {
      ...sandbox,
      permissions: {
        type: "managed",
        network: "restricted",
        file_system: {
          type: "restricted",
          entries: [
            ...(sandbox.permissions.type === "managed" && sandbox.permissions.file_system.type === "restricted" ? sandbox.permissions.file_system.entries : []),
            { path: { type: "path", path: pathToFileUri(other) }, access: "deny" },
          ],
        },
      },
    };
    const read = `cat ${other}/secret; ls ${other}; echo x > ${other}/secret`;
    const denied = await run(client, root, `${read}; exit 1`, denying);
    expect(denied.output).not.toContain("secret\n");
    expect(denied.output).toContain("Permission denied");
    expect(readFileSync(join(other, "secret"), "utf8")).toBe("other session's secret\n");

    // Where the profile does not deny them (the whole disk is readable), the same read works.
    const allowed = await run(client, root, `cat ${other}/secret`, sandbox);
    expect(allowed.output).toBe("other session's secret\n");
  });
});

describe("sandbox refusals", () => {
  it("refuses a deny glob with -32602 naming the entry", async () => {
    const root = project();
    const client = await WireClient.ready((await startTestDaemon()).url);
    const sandbox = codexSandbox("workspace-write", root);
    const permissions = sandbox.permissions.type === "managed" && sandbox.permissions.file_system.type === "restricted" ? sandbox.permissions : undefined;
    const reply = await client.request("process/start", {
      processId: "glob",
      argv: ["true"],
      cwd: pathToFileUri(root),
      env: { PATH },
      tty: false,
      sandbox: {
        ...sandbox,
        permissions: {
          ...permissions,
          file_system: { type: "restricted", entries: [...(permissions?.file_system.type === "restricted" ? permissions.file_system.entries : []), { path: { type: "glob_pattern", pattern: "**/*.env" }, access: "deny" }] },
        },
      },
    });
    expect(reply.error?.code).toBe(ErrorCode.InvalidParams);
    expect(reply.error?.message).toMatch(/sandbox entry 8 \(\{"type":"glob_pattern","pattern":"\*\*\/\*\.env"\} deny\).*glob/);
  });
});
