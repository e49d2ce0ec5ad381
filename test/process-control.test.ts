/** Signals, terminate of whole trees, resize, closeStdin. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { hostOf, hostPidOf, isRunning, zombieChildren } from "./helpers/procfs.js";
import { WireClient, b64 } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";
const start = (client: WireClient, processId: string, argv: string[], extra: Record<string, unknown> = {}) =>
  client.call("process/start", { processId, argv, cwd: "/tmp", env: { PATH }, tty: false, ...extra });

/** Starts bash that prints `ready` once its traps are set, and waits for that. */
async function startTrapping(client: WireClient, processId: string, traps: string, tty = false) {
  await start(client, processId, ["bash", "--norc", "-c", `${traps}; echo ready; while :; do sleep 5 & wait $!; done`], { tty });
  await vi.waitUntil(() => client.output(processId).includes("ready"));
}

describe("signals", () => {
  it("delivers friendly names and POSIX names, and rejects unknown ones with -32602", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await startTrapping(client, "s", 'trap "echo got-usr1" USR1; trap "echo got-int; exit 4" INT');
    await client.call("process/signal", { processId: "s", signal: "SIGUSR1" });
    await vi.waitUntil(() => client.output("s").includes("got-usr1"));
    await client.call("process/signal", { processId: "s", signal: "interrupt" });
    const exited = await client.next((message) => message.method === "process/exited");
    expect(exited.params?.exitCode).toBe(4);
    expect(client.output("s")).toBe("ready\ngot-usr1\ngot-int\n");

    const unknown = await client.request("process/signal", { processId: "s", signal: "SIGNOPE" });
    expect(unknown.error).toMatchObject({ code: ErrorCode.InvalidParams, message: "unknown variant `SIGNOPE`, expected `interrupt`" });
    for (const name of ["constructor", "__proto__", "toString"]) {
      const inherited = await client.request("process/signal", { processId: "s", signal: name });
      expect(inherited.error?.code).toBe(ErrorCode.InvalidParams);
    }
    // As upstream: a signal to nowhere is not an error.
    expect(await client.call("process/signal", { processId: "ghost", signal: "interrupt" })).toEqual({});
  });

  it("reports death by signal as 128 + signo and names the signal in process/list", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "k", ["sleep", "60"]);
    await client.call("process/signal", { processId: "k", signal: "kill" });
    const exited = await client.next((message) => message.method === "process/exited");
    expect(exited.params?.exitCode).toBe(137);
    const list = await client.call<{ processes: { processId: string; signal: string | null; state: string }[] }>("process/list", {});
    expect(list.processes[0]).toMatchObject({ processId: "k", signal: "SIGKILL" });
  });

  it("sends interrupt on a PTY to the foreground job, like Ctrl-C", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "sh", ["bash", "--norc", "-i"], { tty: true, env: { PATH, PS1: "$ " } });
    await client.call("process/write", { processId: "sh", chunk: b64("sleep 60\n") });
    // Wait until sleep is the terminal's foreground job, then interrupt it.
    const list = await client.call<{ processes: { pid: number }[] }>("process/list", {});
    const shellPid = list.processes[0]!.pid;
    await vi.waitUntil(() => {
      const foreground = Number(readStat(shellPid)?.[5]);
      return foreground > 0 && readComm(foreground) === "sleep";
    });
    await client.call("process/signal", { processId: "sh", signal: "interrupt" });
    // The shell itself survives and reports sleep's death by SIGINT.
    await client.call("process/write", { processId: "sh", chunk: b64("echo status-$?\n") });
    await vi.waitUntil(() => client.output("sh").includes("status-130"));
    await client.call("process/write", { processId: "sh", chunk: b64("exit 0\n") });
    const exited = await client.next((message) => message.method === "process/exited");
    expect(exited.params?.exitCode).toBe(0);
  });
});

function readComm(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, "latin1").trim();
  } catch {
    return undefined;
  }
}
function readStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

describe("terminate", () => {
  it("kills the whole tree, grandchildren included, and leaves no zombie", async () => {
    const daemon = await startTestDaemon({ killGraceMs: 500 });
    const client = await WireClient.ready(daemon.url);
    // The grandchild ignores SIGTERM, so only the SIGKILL after the grace reaches it.
    await start(client, "tree", ["sh", "-c", "sh -c 'trap \"\" TERM; echo $$; while :; do sleep 1; done' & sleep 60 & echo $!; wait"]);
    await vi.waitUntil(() => client.output("tree").trim().split("\n").length === 2);
    const pids = client.output("tree").trim().split("\n").map((pid) => hostPidOf(Number(pid), daemon));
    expect(pids.every(isRunning)).toBe(true);

    expect(await client.call("process/terminate", { processId: "tree" })).toEqual({ running: true });
    await client.closedOf("tree");
    await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]));
    // The host reaped everything: none of its children is left a zombie.
    await vi.waitFor(() => expect(zombieChildren(hostOf(daemon)!)).toEqual([]));
  });

  it("also reaches jobs an interactive shell moved to their own process group", async () => {
    const daemon = await startTestDaemon({ killGraceMs: 200 });
    const client = await WireClient.ready(daemon.url);
    await start(client, "i", ["bash", "--norc", "-i"], { tty: true, env: { PATH, PS1: "$ " } });
    await client.call("process/write", { processId: "i", chunk: b64("sleep 300 & echo job=$!\n") });
    await vi.waitUntil(() => /job=(\d+)/.test(client.output("i")));
    const jobPid = hostPidOf(Number(/job=(\d+)/.exec(client.output("i"))![1]), daemon);
    expect(isRunning(jobPid)).toBe(true);
    await client.call("process/terminate", { processId: "i" });
    await client.closedOf("i");
    await vi.waitFor(() => expect(isRunning(jobPid)).toBe(false));
  });
});

describe("PTY size and stdin", () => {
  it("starts a PTY at cols x rows and resizes it", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "t", ["sh", "-c", "stty size; read x; stty size"], { tty: true, cols: 120, rows: 40 });
    await vi.waitUntil(() => client.output("t").includes("40 120"));
    await client.call("process/resize", { processId: "t", cols: 100, rows: 30 });
    await client.call("process/write", { processId: "t", chunk: b64("\n") });
    await client.closedOf("t");
    expect(client.output("t")).toMatch(/40 120\r\n[\s\S]*30 100\r\n/);

    await start(client, "default", ["stty", "size"], { tty: true });
    await client.closedOf("default");
    expect(client.output("default")).toBe("24 80\r\n");

    await start(client, "pipe", ["sleep", "30"]);
    const refused = await client.request("process/resize", { processId: "pipe", cols: 10, rows: 10 });
    expect(refused.error?.code).toBe(ErrorCode.InvalidParams);
  });

  it("closes a pipe's stdin (EOF) and sends Ctrl-D on a PTY", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "pipe", ["sh", "-c", "cat; echo done"], { pipeStdin: true });
    await client.call("process/write", { processId: "pipe", chunk: b64("data\n") });
    expect(await client.call("process/closeStdin", { processId: "pipe" })).toEqual({ status: "accepted" });
    await client.closedOf("pipe");
    expect(client.output("pipe")).toBe("data\ndone\n");
    expect(await client.call("process/write", { processId: "pipe", chunk: b64("more") })).toEqual({ status: "stdinClosed" });

    await start(client, "pty", ["sh", "-c", "cat >/dev/null; echo got-eof"], { tty: true });
    expect(await client.call("process/closeStdin", { processId: "pty" })).toEqual({ status: "accepted" });
    await client.closedOf("pty");
    expect(client.output("pty")).toContain("got-eof");
  });

  it("delivers a large paste into a PTY whole and in order, though the terminal takes only a few KiB at a time", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    // Raw mode: no line limit, no echo. The child starts reading late, so the
    // kernel's input buffer fills and the rest waits in the daemon.
    await start(client, "paste", ["sh", "-c", "stty raw -echo; echo ready; sleep 0.5; head -c 3000000 | cksum"], { tty: true });
    await vi.waitUntil(() => client.output("paste").includes("ready"));
    const lines = Array.from({ length: 30_000 }, (_, index) => `${String(index).padStart(99, "-")}\n`).join("");
    for (let offset = 0; offset < lines.length; offset += 100_000) {
      await client.call("process/write", { processId: "paste", chunk: b64(lines.slice(offset, offset + 100_000)) });
    }
    await client.closedOf("paste");
    const expected = execFileSync("cksum", { input: lines }).toString().trim();
    expect(client.output("paste").split("ready")[1]!.trim()).toBe(expected);
  });

  it("acknowledges a repeated writeId without writing twice", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "w", ["cat"], { pipeStdin: true });
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await client.call("process/write", { processId: "w", chunk: b64("once\n"), writeId: "w-1" })).toEqual({ status: "accepted" });
    }
    await client.call("process/write", { processId: "w", chunk: b64("twice\n"), writeId: "w-2" });
    await client.call("process/closeStdin", { processId: "w" });
    await client.closedOf("w");
    expect(client.output("w")).toBe("once\ntwice\n");
  });
});

describe("who forks", () => {
  // fork() from the daemon would copy its page tables on the event loop; the
  // process host (server/native, a small C program) spawns every child
  // instead, PTY children too, and stays their parent: it reaps them.
  it.each([true, false])("spawns the child from the process host, never from the daemon (tty %s)", async (tty) => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    await start(client, "c", ["sh", "-c", "echo ready; exec sleep 600"], { tty });
    await client.next((message) => message.method === "process/output" && message.params?.processId === "c");
    const list = await client.call<{ processes: { pid: number }[] }>("process/list", {});
    const pid = list.processes[0]!.pid;
    const parent = Number(readStat(pid)![1]);
    expect(parent).not.toBe(process.pid);
    expect(parent).toBe(hostOf(daemon));
    expect(readFileSync(`/proc/${parent}/cmdline`, "latin1")).toMatch(/\/execmux-host\0/);
    if (!tty) return;
    // Still a session of its own with the terminal as its controlling one:
    // session id, terminal (tty_nr) and foreground group (tpgid).
    const [, , group, session, terminal, foreground] = readStat(pid)!.map(Number);
    expect([group, session, foreground]).toEqual([pid, pid, pid]);
    expect(terminal).toBeGreaterThan(0);
  });
});
