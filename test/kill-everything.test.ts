/**
 * Nothing escapes when every execmux process is SIGKILLed at once, nor when
 * the process host alone is: by default (--spawner-pid-namespace auto, where
 * the machine allows it, as here) the host (server/native) is the init of a
 * PID namespace of its own, and the kernel kills everything in it when that
 * init dies, children and their setsid grandchildren alike, with nobody left
 * to write cgroup.kill.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { spawnTestDaemon } from "./helpers/cli.js";
import { descendants, hostHasPidNamespace, hostOf, hostPidOf, isRunning, parentOf } from "./helpers/procfs.js";
import { WireClient } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

function read(path: string): string {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return "";
  }
}

/** The cgroup v2 directory a process is in (where its host makes the directory of its own), or undefined without cgroup v2. */
function cgroupDirectoryOf(pid: number): string | undefined {
  const mount = read("/proc/self/mountinfo")
    .split("\n")
    .map((line) => line.split(" "))
    .find((fields) => fields[fields.indexOf("-") + 1] === "cgroup2" && fields[3] === "/")?.[4];
  const path = /^0::(\/.*)$/m.exec(read(`/proc/${pid}/cgroup`))?.[1];
  return mount && path ? join(mount, path) : undefined;
}

/** A pid is the same process while its start time is (field 22 of stat). */
const startTime = (pid: number) => read(`/proc/${pid}/stat`).split(") ")[1]?.split(" ")[19];

/** Starts, on a pipe and on a PTY, a child that leaves a setsid grandchild (`sleep 600`) and waits for it. */
async function startTrees(client: WireClient): Promise<void> {
  for (const tty of [false, true]) {
    const processId = tty ? "on-pty" : "on-pipes";
    await client.call("process/start", { processId, argv: ["sh", "-c", "setsid sleep 600 & echo started; wait"], cwd: "/", env: { PATH }, tty });
    await vi.waitUntil(() => client.output(processId).includes("started"));
  }
}

describe("every execmux process SIGKILLed at once", () => {
  it("can be tested here: the process host is the init of a PID namespace of its own (root)", async () => {
    const daemon = await spawnTestDaemon([]);
    const host = hostOf(daemon.pid)!;
    expect(host).toBeDefined();
    expect(hostHasPidNamespace(host), "no PID namespace here, so these tests cannot show the guarantee").toBe(true);
    expect(/^NSpid:\s+\d+\s+1$/m.test(read(`/proc/${host}/status`))).toBe(true);
  });

  it("leaves no child, setsid grandchild or zombie behind (the default)", async () => {
    const daemon = await spawnTestDaemon([]);
    const client = await WireClient.ready(daemon.url);
    await startTrees(client);
    // Found before anything is killed, while every parent still holds its children.
    const host = hostOf(daemon.pid)!;
    const everything = [host, ...descendants(host)];
    // At rest, `execmux serve` is two processes: the daemon, and the host it started (the init of its PID namespace).
    const execmux = [daemon.pid, host];
    expect(read(`/proc/${host}/cmdline`)).toMatch(/\/execmux-host\0/);
    const sleeps = everything.filter((pid) => read(`/proc/${pid}/cmdline`) === "sleep\x00600\x00");
    expect(sleeps).toHaveLength(2);
    // Both grandchildren left their parent's session.
    for (const pid of sleeps) expect(read(`/proc/${pid}/stat`).split(") ")[1]!.split(" ")[3]).toBe(String(pid));
    const recorded = new Map(everything.map((pid) => [pid, startTime(pid)]));

    // Stopped first, both of them: neither can see the other go and kill the
    // children itself, so only the namespace's end can explain their going.
    for (const signal of ["SIGSTOP", "SIGKILL"] as const) for (const pid of execmux) process.kill(pid, signal);
    await daemon.exited;
    // Gone from /proc altogether: killed and reaped, no zombie left.
    const left = () => [...recorded].filter(([pid, started]) => started !== undefined && startTime(pid) === started).map(([pid]) => pid);
    await vi.waitFor(() => expect(left()).toEqual([]), { timeout: 10_000, interval: 20 });

    // Nobody was left to remove the host's cgroup directory: the next host started beside it does. (A
    // host another test file starts meanwhile may be that next one: then it is gone already.)
    const parent = cgroupDirectoryOf(process.pid);
    expect(parent, "no cgroup v2 here: the daemon's containment cannot be checked").toBeDefined();
    const leftBehind = readdirSync(parent!).filter((name) => name.startsWith(`execmux-${host}-`));
    expect(leftBehind.length).toBeLessThanOrEqual(1);
    // Its URL line comes once it listens, after its host made its own cgroup directory.
    await spawnTestDaemon([]);
    expect(readdirSync(parent!).filter((name) => name.startsWith(`execmux-${host}-`))).toEqual([]);
  });
});

describe("the process host killed outright", () => {
  it("takes every child with it, setsid grandchildren too, though nothing was left to kill them", async () => {
    // Without cgroups, only the namespace can reach a grandchild that left its session.
    const daemon = await spawnTestDaemon(["--process-containment", "process-tree"]);
    const client = await WireClient.ready(daemon.url);
    await startTrees(client);
    const host = hostOf(daemon.pid)!;
    const everything = descendants(host);
    expect(everything.filter((pid) => read(`/proc/${pid}/cmdline`) === "sleep\x00600\x00")).toHaveLength(2);
    const recorded = new Map(everything.map((pid) => [pid, startTime(pid)]));
    process.kill(host, "SIGKILL");
    const left = () => [...recorded].filter(([pid, started]) => started !== undefined && startTime(pid) === started).map(([pid]) => pid);
    await vi.waitFor(() => expect(left()).toEqual([]), { timeout: 10_000, interval: 20 });
    // The daemon cannot serve sessions whose processes are gone: it says so and stops.
    expect((await daemon.exited).code).toBe(1);
  });

  it("would leave them running without the namespace (--spawner-pid-namespace off): what the namespace is for", async () => {
    const daemon = await spawnTestDaemon(["--process-containment", "process-tree", "--spawner-pid-namespace", "off"]);
    const client = await WireClient.ready(daemon.url);
    await startTrees(client);
    const host = hostOf(daemon.pid)!;
    expect(hostHasPidNamespace(host)).toBe(false);
    const sleeps = descendants(host).filter((pid) => read(`/proc/${pid}/cmdline`) === "sleep\x00600\x00");
    expect(sleeps).toHaveLength(2);
    try {
      process.kill(host, "SIGKILL");
      expect((await daemon.exited).code).toBe(1);
      // Orphans of a dead subreaper: adopted by the machine's init, still running.
      await vi.waitFor(() => expect(sleeps.map(parentOf).every((parent) => parent !== host)).toBe(true));
      expect(sleeps.every(isRunning)).toBe(true);
    } finally {
      for (const pid of sleeps) if (isRunning(pid)) process.kill(pid, "SIGKILL");
    }
  });
});

describe("the host's PID namespace", () => {
  it("reports the machine's pids, while children see their own", async () => {
    const daemon = await spawnTestDaemon(["--spawner-pid-namespace", "on"]);
    const client = await WireClient.ready(daemon.url);
    for (const tty of [false, true]) {
      await client.call("process/start", { processId: `s-${tty}`, argv: ["sh", "-c", "echo $$; exec sleep 600"], cwd: "/", env: { PATH }, tty });
      await vi.waitUntil(() => /^\d+\s*$/.test(client.output(`s-${tty}`)));
    }
    const list = await client.call<{ processes: { processId: string; pid: number }[] }>("process/list", {});
    const host = hostOf(daemon.pid)!;
    for (const { processId, pid } of list.processes) {
      // The machine's pid of the very process, a child of the host, which knows itself by the namespace's.
      await vi.waitUntil(() => read(`/proc/${pid}/cmdline`) === "sleep\x00600\x00");
      expect(parentOf(pid)).toBe(host);
      const own = Number(client.output(processId).trim());
      expect(new RegExp(`^NSpid:\\s+${pid}\\s+${own}$`, "m").test(read(`/proc/${pid}/status`))).toBe(true);
      expect(hostPidOf(own, daemon.pid)).toBe(pid);
    }
  });

  it("reports each child's own machine pid with hundreds running", async () => {
    const daemon = await spawnTestDaemon(["--spawner-pid-namespace", "on", "--max-processes-per-session", "1000"]);
    const client = await WireClient.ready(daemon.url);
    const count = 700;
    for (let first = 0; first < count; first += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, count - first) }, (_, offset) =>
          client.call("process/start", { processId: `n${first + offset}`, argv: ["sleep", `600.${first + offset}`], cwd: "/", env: { PATH }, tty: false }),
        ),
      );
    }
    const list = await client.call<{ processes: { processId: string; pid: number }[] }>("process/list", {});
    expect(list.processes).toHaveLength(count);
    const wrong = list.processes.filter(({ processId, pid }) => read(`/proc/${pid}/cmdline`) !== `sleep\x00600.${processId.slice(1)}\x00`);
    expect(wrong).toEqual([]);
  });

  it("gives children a /proc of the namespace: their own pids, pgrep and kill agree", async () => {
    const daemon = await spawnTestDaemon(["--spawner-pid-namespace", "on"]);
    const client = await WireClient.ready(daemon.url);
    for (const tty of [false, true]) {
      const processId = `view-${tty}`;
      // The forked child is named "sleep" only once it has exec'd: look until it is (bounded), not once.
      const script =
        'sleep 600 & for try in $(seq 100); do found=$(pgrep -P $$ -x sleep) && break; sleep 0.05; done; ' +
        'echo "bg=$! found=$found outer=$(test -e /proc/' + daemon.pid + ' && echo seen || echo hidden)"; kill ${found:-$!}; wait $!; echo "wait=$?"';
      await client.call("process/start", { processId, argv: ["sh", "-c", script], cwd: "/", env: { PATH }, tty });
      await vi.waitUntil(() => client.output(processId).includes("wait="), { timeout: 10_000 });
      const [, background, found, outer] = /bg=(\d+) found=(\d*) outer=(\w+)/.exec(client.output(processId)) ?? [];
      // The shell's $! is what its own /proc shows, so pgrep finds it and kill reaches it (status 143: SIGTERM).
      expect(found).toBe(background);
      expect(client.output(processId)).toContain("wait=143");
      // The daemon, outside the namespace, is not among what the children see.
      expect(outer).toBe("hidden");
    }
  });
});
