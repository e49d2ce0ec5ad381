/**
 * A sandboxed process behaves as an unsandboxed one: pipes and PTYs, signals
 * to its process group, resize, terminate of the whole tree, exit codes,
 * resume; and the daemon's own files stay hidden from it.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { codexSandbox, pathToFileUri } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { freePort } from "./helpers/free-port.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient, b64 } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

function startSandboxed(client: WireClient, processId: string, root: string, argv: string[], extra: Record<string, unknown> = {}) {
  return client.call("process/start", {
    processId,
    argv,
    cwd: pathToFileUri(root),
    env: { PATH, TERM: "dumb", PS1: "prompt$ " },
    tty: false,
    sandbox: codexSandbox("workspace-write", root),
    ...extra,
  });
}

const exitOf = (client: WireClient, processId: string) =>
  client.next((message) => message.method === "process/exited" && message.params?.processId === processId);

/** Pids of live `sleep SECONDS` processes (any SECONDS starting with `seconds`). */
function sleeps(seconds: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "latin1").startsWith(`sleep\0${seconds}`)) found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

describe("sandboxed processes", () => {
  it("an interrupt reaches a trapping script, whose own exit code comes back", async () => {
    const root = scratchDirectory("sandbox-signal");
    const client = await WireClient.ready((await startTestDaemon()).url);
    await startSandboxed(client, "trap", root, ["bash", "--noprofile", "--norc", "-c", 'trap "echo trapped; exit 7" INT; echo ready; while :; do sleep 0.05; done']);
    await vi.waitUntil(() => client.output("trap").includes("ready"));
    await client.call("process/signal", { processId: "trap", signal: "interrupt" });
    const exited = await exitOf(client, "trap");
    expect(exited.params).toMatchObject({ exitCode: 7, sandboxDenied: false });
    await client.closedOf("trap");
    expect(client.output("trap")).toBe("ready\ntrapped\n");
  });

  it("a signal death is reported as 128+N, as without a sandbox", async () => {
    const root = scratchDirectory("sandbox-signal");
    const client = await WireClient.ready((await startTestDaemon()).url);
    await startSandboxed(client, "usr1", root, ["bash", "--noprofile", "--norc", "-c", "echo ready; exec sleep 600"]);
    await vi.waitUntil(() => client.output("usr1").includes("ready"));
    await client.call("process/signal", { processId: "usr1", signal: "SIGUSR1" });
    expect((await exitOf(client, "usr1")).params?.exitCode).toBe(128 + 10);
  });

  it("terminate ends the whole tree inside the sandbox", async () => {
    const root = scratchDirectory("sandbox-terminate");
    const marker = `${process.pid}${Date.now()}`.slice(-9);
    const client = await WireClient.ready((await startTestDaemon()).url);
    // A background child in its own process group, which a group signal alone would miss.
    await startSandboxed(client, "tree", root, ["bash", "--noprofile", "--norc", "-c", `set -m; sleep ${marker} & sleep ${marker}1 & echo ready; wait`]);
    await vi.waitUntil(() => client.output("tree").includes("ready") && sleeps(marker).length === 2);
    expect(await client.call("process/terminate", { processId: "tree" })).toEqual({ running: true });
    await client.closedOf("tree");
    await vi.waitUntil(() => sleeps(marker).length === 0);
  });

  it("runs in a PTY with job control: Ctrl-C stops the foreground job, resize reaches it", async () => {
    const root = scratchDirectory("sandbox-pty");
    const client = await WireClient.ready((await startTestDaemon()).url);
    await startSandboxed(client, "pty", root, ["bash", "--noprofile", "--norc", "-i"], { tty: true, cols: 80, rows: 24 });
    const type = (text: string) => client.call("process/write", { processId: "pty", chunk: b64(text), writeId: `w${Math.random()}` });
    await vi.waitUntil(() => client.output("pty").includes("prompt$ "));
    await type("stty size; tty -s && echo on-a-terminal\n");
    // Twice: the terminal's echo of the line, then the command's own output.
    await vi.waitUntil(() => client.output("pty").split("on-a-terminal").length > 2);
    expect(client.output("pty")).toContain("24 80");
    await client.call("process/resize", { processId: "pty", cols: 120, rows: 40 });
    await type("stty size\n");
    await vi.waitUntil(() => client.output("pty").includes("40 120"));
    // A sleep of its own (other test files run `sleep 600` at the same time).
    const marker = `${process.pid}${Date.now()}`.slice(-9);
    await type(`sleep ${marker}\n`);
    await vi.waitUntil(() => sleeps(marker).length > 0, { timeout: 10_000 });
    await type("\x03");
    await vi.waitUntil(() => sleeps(marker).length === 0, { timeout: 10_000 });
    await type("echo after-sleep=$?\n");
    await vi.waitUntil(() => client.output("pty").includes("after-sleep=130"));
    await type("exit 5\n");
    expect((await exitOf(client, "pty")).params?.exitCode).toBe(5);
  });

  it("keeps running across a disconnect and is resumed", async () => {
    const root = scratchDirectory("sandbox-resume");
    const daemon = await startTestDaemon();
    const first = await WireClient.connect(daemon.url);
    const init = await first.request("initialize", { clientName: "sandbox" });
    first.send({ method: "initialized", params: {} });
    await startSandboxed(first, "echo", root, ["bash", "--noprofile", "--norc", "-c", "while read line; do echo \"got $line\" >> log.txt; echo \"got $line\"; done"], { pipeStdin: true });
    first.close();
    await first.closed;
    const second = await WireClient.connect(daemon.url);
    await second.request("initialize", { clientName: "sandbox", resumeSessionId: init.result?.sessionId });
    second.send({ method: "initialized", params: {} });
    await second.call("process/write", { processId: "echo", chunk: b64("hello\n"), writeId: "1" });
    await vi.waitUntil(async () => {
      const read = await second.call<{ chunks: { chunk: string }[] }>("process/read", { processId: "echo", afterSeq: 0 });
      return read.chunks.some((chunk) => Buffer.from(chunk.chunk, "base64").toString().includes("got hello"));
    });
    expect(readFileSync(join(root, "log.txt"), "utf8")).toBe("got hello\n");
  });

  it("keeps argv[0] as given, and arg0 when set", async () => {
    const root = scratchDirectory("sandbox-argv0");
    const client = await WireClient.ready((await startTestDaemon()).url);
    await startSandboxed(client, "plain", root, ["bash", "--noprofile", "--norc", "-c", 'echo "$0"']);
    await startSandboxed(client, "custom", root, ["bash", "--noprofile", "--norc", "-c", 'echo "$0"', "ignored"], { arg0: "-custom" });
    await client.closedOf("plain");
    await client.closedOf("custom");
    expect(client.output("plain")).toBe("bash\n");
    // bash -c: $0 is the first argument after the command string.
    expect(client.output("custom")).toBe("ignored\n");
    await startSandboxed(client, "ps", root, ["bash", "--noprofile", "--norc", "-c", "cat /proc/$$/cmdline | tr '\\0' ' '"], { arg0: "-custom" });
    await client.closedOf("ps");
    expect(client.output("ps")).toMatch(/^-custom --noprofile/);
  });

  it("hides the daemon's token file, and the process host's state directory and socket", async () => {
    const root = scratchDirectory("sandbox-hidden");
    const tokenFile = join(scratchDirectory("sandbox-token"), "tokens");
    writeFileSync(tokenFile, "s3cret-token\n");
    // A fixed port: a host that outlives the daemon, listening on a socket in
    // the state directory. Whoever reaches that socket speaks to the host as
    // the daemon does, with no token.
    const stateDirectory = join(scratchDirectory("sandbox-state"), "state");
    const daemon = await startTestDaemon({ tokenFile, stateDirectory, listen: `ws://127.0.0.1:${await freePort()}` });
    const socket = join(stateDirectory, readdirSync(stateDirectory).find((name) => name.endsWith(".sock"))!);
    const client = await WireClient.ready(`${daemon.url}/?token=s3cret-token`);
    const script = `cat ${tokenFile}; ls ${stateDirectory}; test -S ${socket} && echo socket-visible; echo done`;
    await startSandboxed(client, "peek", root, ["bash", "--noprofile", "--norc", "-c", script]);
    await client.closedOf("peek");
    const output = client.output("peek");
    expect(output).not.toContain("s3cret-token");
    expect(output).not.toContain("host-");
    expect(output).not.toContain("socket-visible");
    expect(output).toContain("Permission denied");
    expect(output).toContain("done");
    // Without a sandbox all of them are there to see (the probe works).
    await client.call("process/start", { processId: "free", argv: ["bash", "-c", script], cwd: "/", env: { PATH }, tty: false });
    await client.closedOf("free");
    expect(client.output("free")).toContain("s3cret-token");
    expect(client.output("free")).toContain(basename(socket));
    expect(client.output("free")).toContain("socket-visible");
  });
});
