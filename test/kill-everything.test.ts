/**
 * Nothing escapes when every execmux process is SIGKILLed at once: by
 * default (--spawner-pid-namespace auto, where the machine allows it, as
 * here) the spawner runs below the init of a PID namespace of its own (server/src/spawner/pid-namespace.ts), and the
 * kernel kills everything in it when that init dies, children and their
 * setsid grandchildren alike, with nobody left to write cgroup.kill.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { ownCgroupDirectory } from "../server/dist/process/cgroup-paths.js";
import { pidNamespaceLaunch } from "../server/dist/spawner/pid-namespace.js";
import { spawnTestDaemon } from "./helpers/cli.js";
import { isRunning, spawnerOf } from "./helpers/procfs.js";
import { WireClient } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

function read(path: string): string {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return "";
  }
}

/** Every descendant of `pid`, from the children lists of its threads, recursively. */
function descendants(pid: number): number[] {
  const found: number[] = [];
  for (const pending = [pid]; pending.length > 0; ) {
    const parent = pending.pop()!;
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      for (const child of read(`/proc/${parent}/task/${task}/children`).trim().split(" ")) {
        if (child === "") continue;
        found.push(Number(child));
        pending.push(Number(child));
      }
    }
  }
  return found;
}

describe("every execmux process SIGKILLed at once", () => {
  it("can be tested here: `unshare --pid` works (util-linux, and root or user namespaces)", () => {
    expect(pidNamespaceLaunch(), "unshare --pid is not possible on this machine, so these tests cannot show the guarantee").toBeDefined();
  });

  it("leaves no child, setsid grandchild or zombie behind (the default)", async () => {
    const daemon = await spawnTestDaemon([]);
    const client = await WireClient.ready(daemon.url);
    for (const tty of [false, true]) {
      const processId = tty ? "on-pty" : "on-pipes";
      await client.call("process/start", { processId, argv: ["sh", "-c", "setsid sleep 600 & echo started; wait"], cwd: "/", env: { PATH }, tty });
      await vi.waitUntil(() => client.output(processId).includes("started"));
    }
    // Found before anything is killed, while every parent still holds its children.
    const spawner = spawnerOf(daemon.pid)!;
    const everything = descendants(daemon.pid);
    expect(everything).toContain(spawner);
    const execmux = [daemon.pid, ...everything.filter((pid) => /spawner-main|host-main|cli\.js\x00serve/.test(read(`/proc/${pid}/cmdline`)))];
    // `execmux serve`, its process host, the daemon on the port the host forked, the perl that made the namespace, its init and the spawner.
    expect(execmux).toHaveLength(6);
    const host = execmux.find((pid) => read(`/proc/${pid}/cmdline`).includes("host-main"));
    expect(host).toBeDefined();
    const sleeps = everything.filter((pid) => read(`/proc/${pid}/cmdline`) === "sleep\x00600\x00");
    expect(sleeps).toHaveLength(2);
    // Both grandchildren left their parent's session.
    for (const pid of sleeps) expect(read(`/proc/${pid}/stat`).split(") ")[1]!.split(" ")[3]).toBe(String(pid));

    // A pid is the same process while its start time is (field 22 of stat).
    const startTime = (pid: number) => read(`/proc/${pid}/stat`).split(") ")[1]?.split(" ")[19];
    const recorded = new Map(everything.map((pid) => [pid, startTime(pid)]));

    // Stopped first, all of them: none can see another go and kill the
    // children itself, so only the namespace's end can explain their going.
    for (const signal of ["SIGSTOP", "SIGKILL"] as const) {
      for (const pid of execmux) {
        try {
          process.kill(pid, signal);
        } catch {
          // The spawner dies with the init as soon as the init does: ESRCH once it is reaped.
        }
      }
    }
    await daemon.exited;
    // Gone from /proc altogether: killed and reaped, no zombie left.
    const left = () => [...recorded].filter(([pid, started]) => started !== undefined && startTime(pid) === started).map(([pid]) => pid);
    await vi.waitFor(() => expect(left()).toEqual([]), { timeout: 10_000, interval: 20 });

    // Nobody was left to remove the host's cgroup directory: the next daemon started beside it does.
    const parent = ownCgroupDirectory();
    expect(parent, "no cgroup v2 here: the daemon's containment cannot be checked").toBeDefined();
    const leftBehind = readdirSync(parent!).filter((name) => name.startsWith(`execmux-${host}-`));
    expect(leftBehind).toHaveLength(1);
    // Its URL line comes once it listens, after it made its own cgroup directory.
    await spawnTestDaemon([]);
    expect(existsSync(join(parent!, leftBehind[0]!))).toBe(false);
  });

  it("reports host pids from inside the namespace, and a spawner killed alone kills nobody", async () => {
    const daemon = await spawnTestDaemon(["--spawner-pid-namespace", "on"]);
    const client = await WireClient.ready(daemon.url);
    for (const tty of [false, true]) {
      await client.call("process/start", { processId: `s-${tty}`, argv: ["sleep", "600"], cwd: "/", env: { PATH }, tty });
    }
    const list = await client.call<{ processes: { pid: number }[] }>("process/list", {});
    const pids = list.processes.map((process) => process.pid);
    const spawner = spawnerOf(daemon.pid)!;
    for (const pid of pids) {
      // The host's pid of the very process (PTY children exec sleep from perl, hence the wait).
      await vi.waitUntil(() => read(`/proc/${pid}/cmdline`) === "sleep\x00600\x00");
      expect(read(`/proc/${pid}/stat`).split(") ")[1]!.split(" ")[1]).toBe(String(spawner));
      expect(/^NSpid:\s+(\d+)\s+\d+$/m.exec(read(`/proc/${pid}/status`))?.[1]).toBe(String(pid));
    }
    process.kill(spawner, "SIGKILL");
    await vi.waitUntil(() => spawnerOf(daemon.pid) !== undefined && spawnerOf(daemon.pid) !== spawner, { timeout: 20_000 });
    expect(pids.every(isRunning)).toBe(true);
    // Adopted by the daemon: terminate still reaches them by their host pids.
    for (const tty of [false, true]) await client.call("process/terminate", { processId: `s-${tty}` });
    await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]), { timeout: 10_000, interval: 20 });
  });

  it("reports each child's own host pid with hundreds running (the spawner's children list is longer than one read)", async () => {
    const daemon = await spawnTestDaemon(["--spawner-pid-namespace", "on", "--max-processes-per-session", "1000"]);
    const client = await WireClient.ready(daemon.url);
    // A page of that list holds about 500 pids: 700 children need more than one.
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
