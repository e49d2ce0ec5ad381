/**
 * Sessions belong to the identity that made them; observers follow another
 * connection's session read-only; session/list and `execmux ps` show what an
 * identity may see; detached work lasts until it ends (docs/sessions.md).
 * Real daemons, real processes, real sockets.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { CloseCode, ErrorCode, decodeBinaryOutputFrame } from "@execmux/shared";
import { connect, listSessions, observe, RpcRequestError, type ProcessHandle } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";
import { runCli, spawnDaemon } from "./helpers/cli.js";
import { isRunning } from "./helpers/procfs.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient, b64 } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";
const [ALICE, MALLORY, WATCHER] = ["alice-token-0001", "mallory-token-0002", "watcher-token-0003"];

/** A daemon with two ordinary tokens and one observer token. */
async function daemonWithIdentities(overrides: Parameters<typeof startTestDaemon>[0] = {}) {
  const directory = scratchDirectory("sessions");
  const tokenFile = join(directory, "tokens");
  const observerTokenFile = join(directory, "observer-tokens");
  writeFileSync(tokenFile, `${ALICE}\n${MALLORY}\n`);
  writeFileSync(observerTokenFile, `# may watch every session\n${WATCHER}\n`);
  return startTestDaemon({ tokenFile, observerTokenFile, ...overrides });
}

async function initialize(client: WireClient, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.call("initialize", params);
  client.send({ method: "initialized" });
  return result;
}

const startCat = (client: WireClient, processId: string) =>
  client.call("process/start", { processId, argv: ["cat"], cwd: "/", env: { PATH }, pipeStdin: true, tty: false });

/** Output of a process from a client's notifications, with process/gap and the other events in between. */
const eventsOf = (client: WireClient, processId: string) =>
  client.messages.filter((message) => message.method?.startsWith("process/") && message.params?.processId === processId).map((message) => message.method);

describe("sessions belong to the identity that made them", () => {
  it("answers another identity's resume, takeover and observe exactly as for an unknown session, naming no one", async () => {
    const daemon = await daemonWithIdentities();
    const alice = await WireClient.connect(daemon.url, ALICE);
    const { sessionId } = await initialize(alice, { clientName: "alice's agent" });
    await startCat(alice, "cat");

    const mallory = await WireClient.connect(daemon.url, MALLORY);
    const never = await mallory.request("initialize", { clientName: "m", resumeSessionId: "00000000-0000-0000-0000-000000000000" });
    const unknown = (id: unknown) => ({ code: ErrorCode.InvalidRequest, message: `unknown session id ${String(id)}` });
    expect(never.error).toEqual(unknown("00000000-0000-0000-0000-000000000000"));
    const attempts = [
      await mallory.request("initialize", { clientName: "m", resumeSessionId: sessionId }),
      await mallory.request("initialize", { clientName: "m", resumeSessionId: sessionId, takeover: true }),
      await mallory.request("initialize", { clientName: "m", observeSessionId: sessionId }),
    ];
    for (const attempt of attempts) expect(attempt.error).toEqual(unknown(sessionId));
    expect(JSON.stringify(mallory.messages)).not.toContain("alice");

    // Alice's session is untouched: still hers, still attached, her process still answers.
    await alice.call("process/write", { processId: "cat", chunk: b64("still mine\n") });
    await vi.waitFor(() => expect(alice.output("cat")).toBe("still mine\n"));
    alice.close();
    expect(await alice.closed).toBe(1005);

    // Detached, it is just as unknown to Mallory; Alice resumes it.
    expect((await mallory.request("initialize", { clientName: "m", resumeSessionId: sessionId, takeover: true })).error).toEqual(unknown(sessionId));
    const back = await WireClient.connect(daemon.url, ALICE);
    expect((await back.call("initialize", { clientName: "alice again", resumeSessionId: sessionId })).sessionId).toBe(sessionId);
  });
});

describe("observers", () => {
  it("follow a session another client drives: history, then live output, exit and close; they cannot type, signal, start or touch files", async () => {
    const daemon = await daemonWithIdentities();
    const owner = await WireClient.connect(daemon.url, ALICE);
    const { sessionId } = await initialize(owner, { clientName: "agent" });
    await startCat(owner, "cat");
    await owner.call("process/write", { processId: "cat", chunk: b64("history\n") });
    await vi.waitFor(() => expect(owner.output("cat")).toBe("history\n"));

    // The observer token's holder (another identity) and Alice's own identity may both observe.
    const watcher = await WireClient.connect(daemon.url, WATCHER);
    const observed = await initialize(watcher, { clientName: "console", observeSessionId: sessionId });
    expect(observed).toMatchObject({ sessionId, detachedTtlMs: 60_000, keepWhileRunning: false });
    const own = await WireClient.connect(daemon.url, ALICE);
    await initialize(own, { clientName: "alice's console", observeSessionId: sessionId });
    // A third identity without observer rights: unknown.
    const mallory = await WireClient.connect(daemon.url, MALLORY);
    expect((await mallory.request("initialize", { clientName: "m", observeSessionId: sessionId })).error?.code).toBe(ErrorCode.InvalidRequest);

    for (const observer of [watcher, own]) {
      const started = await observer.next((message) => message.method === "process/started");
      expect(started.params).toMatchObject({ processId: "cat", tty: false, argv: ["cat"], argvTruncated: false });
      await vi.waitFor(() => expect(observer.output("cat")).toBe("history\n"));
    }
    await owner.call("process/write", { processId: "cat", chunk: b64("live\n") });
    for (const observer of [watcher, own]) await vi.waitFor(() => expect(observer.output("cat")).toBe("history\nlive\n"));

    const refused: [string, unknown][] = [
      ["process/write", { processId: "cat", chunk: b64("typed by the observer\n") }],
      ["process/signal", { processId: "cat", signal: "SIGKILL" }],
      ["process/terminate", { processId: "cat" }],
      ["process/closeStdin", { processId: "cat" }],
      ["process/start", { processId: "mine", argv: ["true"], cwd: "/", env: { PATH } }],
      ["fs/readFile", { path: "/etc/hostname" }],
    ];
    for (const [method, params] of refused) {
      const reply = await watcher.request(method, params);
      expect(reply.error?.code, method).toBe(ErrorCode.ObserverReadOnly);
    }
    // Reading is allowed: the owner's output as upstream's read gives it.
    const read = await watcher.call<{ chunks: unknown[] }>("process/read", { processId: "cat", afterSeq: 0 });
    expect(read.chunks).toHaveLength(2);

    // The owner kept its session and its process: nothing the observer sent reached it.
    await owner.call("process/write", { processId: "cat", chunk: b64("owner again\n") });
    await vi.waitFor(() => expect(owner.output("cat")).toBe("history\nlive\nowner again\n"));
    await owner.call("process/closeStdin", { processId: "cat" });
    await owner.closedOf("cat");
    for (const observer of [watcher, own]) {
      await observer.closedOf("cat");
      expect(eventsOf(observer, "cat")).toEqual([
        "process/started",
        "process/output",
        "process/output",
        "process/output",
        "process/exited",
        "process/closed",
      ]);
    }
    expect(owner.messages.some((message) => message.method === "process/started")).toBe(false);

    // A process started while observed is announced, then followed.
    await owner.call("process/start", { processId: "later", argv: ["echo", "after the observer came"], cwd: "/", env: { PATH } });
    await watcher.closedOf("later");
    expect(watcher.output("later")).toBe("after the observer came\n");
  });

  it("through the SDK: each process arrives as a handle with its history; writing fails with -32013", async () => {
    const daemon = await daemonWithIdentities();
    const agent = await connect(daemon.url, { token: ALICE, clientName: "agent" });
    const shell = await agent.start({ argv: ["cat"], pipeStdin: true });
    await shell.write("before\n");
    const firstLine = new Promise<void>((resolve) => shell.onText((text) => text.includes("before") && resolve()));
    await firstLine;

    const watcher = await observe(daemon.url, agent.sessionId, { token: WATCHER, clientName: "console" });
    const handle = await new Promise<ProcessHandle>((resolve) => watcher.onProcess(resolve));
    expect(handle.origin?.argv).toEqual(["cat"]);
    let seen = "";
    handle.onText((text) => (seen += text));
    await vi.waitFor(() => expect(seen).toBe("before\n"));
    await shell.write("after\n");
    await vi.waitFor(() => expect(seen).toBe("before\nafter\n"));
    const refused = await handle.write("sneaky\n").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RpcRequestError);
    expect((refused as RpcRequestError).code).toBe(ErrorCode.ObserverReadOnly);
    await shell.closeStdin();
    expect(await handle.wait()).toBe(0);
    expect(await shell.wait()).toBe(0);
    watcher.close();
    agent.close();
  });

  it("a slow observer never slows the owner or another observer: the owner's stream completes while it reads nothing, and it gets a gap report", async () => {
    const daemon = await daemonWithIdentities({ retainedBytes: 256 * 1024 });
    const owner = await WireClient.connect(daemon.url, ALICE);
    const { sessionId } = await initialize(owner, { clientName: "agent", binaryOutput: true });
    const stalled = await WireClient.connect(daemon.url, ALICE);
    await initialize(stalled, { clientName: "stalled console", observeSessionId: sessionId });
    stalled.pauseReading();
    const reading = await WireClient.connect(daemon.url, WATCHER);
    await initialize(reading, { clientName: "reading console", observeSessionId: sessionId, binaryOutput: true });

    // Far more than the stalled observer's socket and the process's retained output can hold.
    const TOTAL = 32 * 1024 * 1024;
    await owner.call("process/start", { processId: "zeros", argv: ["head", "-c", String(TOTAL), "/dev/zero"], cwd: "/", env: { PATH } });
    await owner.closedOf("zeros");
    expect(binaryBytes(owner, "zeros")).toBe(TOTAL);
    // The other observer kept up on its own and has it all too.
    await reading.closedOf("zeros");
    expect(binaryBytes(reading, "zeros") + missedBytes(reading, "zeros")).toBe(TOTAL);

    // The stalled one missed what was evicted meanwhile, is told exactly how much, then gets the rest.
    stalled.resumeReading();
    await stalled.closedOf("zeros");
    expect(missedBytes(stalled, "zeros")).toBeGreaterThan(0);
    expect(Buffer.byteLength(stalled.output("zeros")) + missedBytes(stalled, "zeros")).toBe(TOTAL);
  });

  it("get their rights from an observer token under execmux serve's process host too", async () => {
    const directory = scratchDirectory("serve-observer");
    writeFileSync(join(directory, "tokens"), `${ALICE}\n`);
    writeFileSync(join(directory, "observers"), `${WATCHER}\n`);
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--log-level", "silent", "--token-file", join(directory, "tokens"), "--observer-token-file", join(directory, "observers")]);
    const agent = await connect(daemon.url, { token: ALICE, clientName: "agent" });
    const echo = await agent.start({ argv: ["echo", "seen from the host"], processId: "echo" });
    // Closed before the observer comes: its whole life reaches the SDK in one burst, before observe() has returned.
    await echo.wait();
    const watcher = await observe(daemon.url, agent.sessionId, { token: WATCHER });
    const handle = await new Promise<ProcessHandle>((resolve) => watcher.onProcess(resolve));
    let seen = "";
    handle.onText((text) => (seen += text));
    expect(await handle.wait()).toBe(0);
    expect(seen).toBe("seen from the host\n");
    expect((await listSessions(daemon.url, { token: WATCHER })).map((session) => session.sessionId)).toEqual([agent.sessionId]);
    watcher.close();
    agent.close();
    daemon.child.kill("SIGTERM");
    await daemon.exited;
  });

  it("are closed with 4003 when the observed session ends, and counted against --max-observers-per-session", async () => {
    const daemon = await daemonWithIdentities({ sessionTtlMs: 50, maxObserversPerSession: 1 });
    const owner = await WireClient.connect(daemon.url, ALICE);
    const { sessionId } = await initialize(owner, { clientName: "agent" });
    const observer = await WireClient.connect(daemon.url, WATCHER);
    await initialize(observer, { clientName: "console", observeSessionId: sessionId });
    const second = await WireClient.connect(daemon.url, ALICE);
    const refused = await second.request("initialize", { clientName: "second", observeSessionId: sessionId });
    expect(refused.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "maxObserversPerSession" } });
    owner.close();
    expect(await observer.closed).toBe(CloseCode.ObservedSessionEnded);
  });
});

describe("listing sessions", () => {
  it("shows each identity its own sessions with their processes, before any initialize; an observer token sees all", async () => {
    const daemon = await daemonWithIdentities();
    const alice = await WireClient.connect(daemon.url, ALICE);
    const { sessionId: aliceSession } = await initialize(alice, { clientName: "alice's agent" });
    await alice.call("process/start", { processId: "sleeper", argv: ["sleep", "300"], cwd: "/", env: { PATH } });
    await alice.call("process/start", { processId: "done", argv: ["sh", "-c", "exit 3"], cwd: "/", env: { PATH } });
    await alice.closedOf("done");
    const mallory = await WireClient.connect(daemon.url, MALLORY);
    const { sessionId: mallorySession } = await initialize(mallory, { clientName: "mallory's agent" });
    mallory.close();
    await mallory.closed;

    // A fresh socket that never initializes.
    const asker = await WireClient.connect(daemon.url, ALICE);
    const listed = await asker.call<{ sessions: Record<string, unknown>[] }>("session/list", {});
    expect(listed.sessions).toHaveLength(1);
    const [session] = listed.sessions;
    expect(session).toMatchObject({ sessionId: aliceSession, clientName: "alice's agent", own: true, current: false, attached: true, detachedAt: null, expiresAt: null });
    const processes = session!.processes as Record<string, unknown>[];
    expect(processes.map(({ processId, state, argv, exitCode }) => ({ processId, state, argv, exitCode }))).toEqual([
      { processId: "sleeper", state: "running", argv: ["sleep", "300"], exitCode: null },
      { processId: "done", state: "closed", argv: ["sh", "-c", "exit 3"], exitCode: 3 },
    ]);
    for (const entry of processes) expect(entry.startedAt).toBeGreaterThanOrEqual(Number(session!.createdAt));
    expect(processes[1]!.exitedAt).toBeGreaterThanOrEqual(Number(processes[1]!.startedAt));
    expect((await alice.call<{ sessions: { current: boolean }[] }>("session/list", {})).sessions[0]!.current).toBe(true);

    // Another identity's session id answers nothing.
    expect(await asker.call("session/list", { sessionId: mallorySession })).toEqual({ sessions: [] });
    // The observer token sees both (Mallory's detached, with when it ends).
    const everything = await listSessions(daemon.url, { token: WATCHER });
    expect(everything.map((entry) => [entry.sessionId, entry.own, entry.attached])).toEqual([
      [aliceSession, false, true],
      [mallorySession, false, false],
    ]);
    expect(everything[1]!.expiresAt).toBeGreaterThan(everything[1]!.detachedAt!);
  });

  it("execmux ps lists the caller's sessions with their processes' commands and states, and never takes a session", async () => {
    const daemon = await daemonWithIdentities();
    const held = await connect(daemon.url, { token: ALICE, clientName: "held by an agent" });
    await held.start({ argv: ["sleep", "300"], processId: "napper" });
    const detached = await runCli(["exec", "--url", daemon.url, "--detach", "--", "sh", "-c", "echo 'it works'; exec sleep 300"], { EXECMUX_TOKEN: ALICE });
    const detachedSession = /session (\S+)/.exec(detached.stdout)![1]!;

    const ps = await runCli(["ps", "--url", daemon.url], { EXECMUX_TOKEN: ALICE });
    expect(ps.code).toBe(0);
    expect(ps.stdout).toMatch(new RegExp(`^session ${held.sessionId}  attached by "held by an agent"\\n  PROCESS .*COMMAND\\n  napper\\s+running\\s+\\d+.*sleep 300\\n`, "m"));
    expect(ps.stdout).toMatch(new RegExp(`^session ${detachedSession}  detached, kept while its processes run\\n`, "m"));
    expect(ps.stdout).toMatch(/ running .*sh -c 'echo '\\''it works'\\''; exec sleep 300'\n/);
    // Mallory sees none of them.
    const other = await runCli(["ps", "--url", daemon.url], { EXECMUX_TOKEN: MALLORY });
    expect(other).toMatchObject({ code: 0, stdout: "" });
    expect(other.stderr).toContain("no sessions of yours");
    // The held session is still held by its client.
    expect(held.connected).toBe(true);
    held.close();
  });
});

describe("detached work that lasts", () => {
  it("a job started with exec --detach outlives the session TTL that ends an abandoned session, and its session ends only after it does", async () => {
    const daemon = await startTestDaemon({ sessionTtlMs: 100 });
    const job = await runCli(["exec", "--url", daemon.url, "--detach", "--", "sleep", "300"]);
    const jobSession = /session (\S+)/.exec(job.stdout)![1]!;

    // An agent's session, abandoned after the job was detached.
    const abandoned = await WireClient.connect(daemon.url);
    await initialize(abandoned, { clientName: "agent" });
    await abandoned.call("process/start", { processId: "left", argv: ["sleep", "300"], cwd: "/", env: { PATH } });
    const sessions = await listSessions(daemon.url);
    const pidOf = (sessionId: string) => sessions.find((entry) => entry.sessionId === sessionId)!.processes[0]!.pid!;
    const jobPid = pidOf(jobSession);
    const leftPid = pidOf(String(abandoned.messages[0]!.result!.sessionId));
    abandoned.close();

    // The abandoned session's TTL passes and it is gone; the job, detached earlier, still runs.
    await vi.waitFor(() => expect(isRunning(leftPid)).toBe(false));
    expect(isRunning(jobPid)).toBe(true);
    const [kept] = await listSessions(daemon.url);
    expect(kept).toMatchObject({ sessionId: jobSession, attached: false, keepWhileRunning: true, expiresAt: null });
    expect(kept!.processes[0]).toMatchObject({ state: "running", argv: ["sleep", "300"] });

    // Once it ends by itself, its exit status stays listed and the session's own TTL begins.
    process.kill(jobPid, "SIGTERM");
    await vi.waitFor(async () => expect((await listSessions(daemon.url))[0]!.processes[0]).toMatchObject({ state: "closed", signal: "SIGTERM" }));
    const [ended] = await listSessions(daemon.url);
    expect(ended!.expiresAt).toBeGreaterThan(Date.now() + 30 * 60_000);
  });

  it("a lasting session's TTL runs from its last process's exit; a client may not exceed the daemon's bounds", async () => {
    const daemon = await startTestDaemon({ sessionTtlMs: 60_000, maxSessionTtlMs: 200, maxLastingSessionsPerClient: 1 });
    const client = await WireClient.connect(daemon.url);
    const asked = await initialize(client, { clientName: "job", keepWhileRunning: true, detachedTtlMs: 3_600_000 });
    // Cut to the operator's maximum.
    expect(asked).toMatchObject({ keepWhileRunning: true, detachedTtlMs: 200 });
    await client.call("process/start", { processId: "job", argv: ["sleep", "300"], cwd: "/", env: { PATH } });
    const pid = (await client.call<{ processes: { pid: number }[] }>("process/list", {})).processes[0]!.pid;
    const second = await WireClient.connect(daemon.url);
    const refused = await second.request("initialize", { clientName: "another job", keepWhileRunning: true });
    expect(refused.error).toMatchObject({ code: ErrorCode.LimitExceeded, data: { limit: "maxLastingSessionsPerClient" } });
    client.close();
    await client.closed;
    await vi.waitFor(async () => expect((await listSessions(daemon.url))[0]).toMatchObject({ attached: false, expiresAt: null }));
    process.kill(pid, "SIGKILL");
    await vi.waitFor(async () => expect(await listSessions(daemon.url)).toEqual([]));
  });

  it("expiry sends SIGTERM, then SIGKILL after the kill grace to what ignored it, and says so in the log", async () => {
    const directory = scratchDirectory("expiry");
    const marker = join(directory, "terminated");
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--process-host", "in-process", "--session-ttl-ms", "100", "--kill-grace-ms", "300"]);
    const client = await WireClient.connect(daemon.url);
    await initialize(client, { clientName: "agent" });
    const polite = `trap 'echo SIGTERM > ${marker}; exit 0' TERM; echo ready; while :; do sleep 0.05; done`;
    await client.call("process/start", { processId: "polite", argv: ["sh", "-c", polite], cwd: "/", env: { PATH } });
    await client.call("process/start", { processId: "stubborn", argv: ["sh", "-c", "trap '' TERM; echo ready; exec sleep 300"], cwd: "/", env: { PATH } });
    await vi.waitFor(() => expect([client.output("polite"), client.output("stubborn")]).toEqual(["ready\n", "ready\n"]));
    const pids = (await client.call<{ processes: { pid: number }[] }>("process/list", {})).processes.map((entry) => entry.pid);
    client.close();

    await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]), { timeout: 10_000 });
    expect(existsSync(marker) && readFileSync(marker, "utf8")).toBe("SIGTERM\n");
    await vi.waitFor(() =>
      expect(daemon.stderr()).toContain("detached session expired: SIGTERM to its 2 running processes, SIGKILL after 300 ms to whatever is left"),
    );
    daemon.child.kill("SIGTERM");
    await daemon.exited;
  });
});

/** Output bytes a client was told it missed (process/gap), each count exact. */
function missedBytes(client: WireClient, processId: string): number {
  const gaps = client.notifications(processId).filter((message) => message.method === "process/gap");
  for (const gap of gaps) expect(gap.params?.bytesExact).toBe(true);
  return gaps.reduce((sum, gap) => sum + Number(gap.params?.bytes), 0);
}

/** Output bytes of a process in the binary frames a client received. */
function binaryBytes(client: WireClient, processId: string): number {
  let total = 0;
  for (const frame of client.binaryFrames) {
    const decoded = decodeBinaryOutputFrame(frame);
    if (decoded?.processId === processId) total += decoded.data.length;
  }
  return total;
}
