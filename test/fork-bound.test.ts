/**
 * A fork bomb stays inside its session: with cgroups, each session's
 * processes share one pids.max (--max-pids-per-session, the native host's
 * trees.c), so forks past it fail there with EAGAIN while another session
 * still starts processes. Without cgroups there is no per-session bound
 * (docs/security.md says so); this test needs them and says so when absent.
 */
import { describe, expect, it, vi } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { startTestDaemon } from "./helpers/daemon.js";
import { isRunning } from "./helpers/procfs.js";
import { WireClient } from "./helpers/wire-client.js";

const PATH = process.env.PATH ?? "/usr/bin:/bin";
const LIMIT = 24;
/** A sleep no other test starts, so the count is this test's alone. */
const MARK = "600.4242";

const start = (client: WireClient, processId: string, argv: string[]) =>
  client.call("process/start", { processId, argv, cwd: "/tmp", env: { PATH }, tty: false });

/** Pids of every `sleep MARK` on the machine. */
function markedSleeps(): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "latin1") === `sleep\0${MARK}\0`) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

describe("forks per session", () => {
  it(`stops a fork bomb at ${LIMIT} processes in its own session while another session starts processes`, async (context) => {
    const daemon = await startTestDaemon({ processContainment: "cgroup", maxPidsPerSession: LIMIT, killGraceMs: 200 }).catch(
      (error: Error) => error,
    );
    if (daemon instanceof Error) return context.skip(`no cgroup containment here: ${daemon.message}`);
    const bomber = await WireClient.ready(daemon.url);
    const other = await WireClient.ready(daemon.url);
    // A subshell forks until it fails to (dash gives up at its first failed fork); the leader then
    // stays (exec, no fork): the host ends what a process left behind once the process is gone.
    const bomb = `(n=0; while [ $n -lt 100 ]; do sleep ${MARK} >/dev/null 2>&1 & n=$((n+1)); done) 2>/dev/null; echo done; exec sleep 600`;
    await start(bomber, "bomb", ["sh", "-c", bomb]);
    await vi.waitUntil(() => bomber.output("bomb").includes("done"), { timeout: 30_000 });
    const held = markedSleeps();
    // The shell itself is one of the session's pids: fewer than LIMIT sleeps got through.
    expect(held.length).toBeGreaterThan(0);
    expect(held.length).toBeLessThan(LIMIT);
    // The other session is not starved: its starts succeed and run.
    for (let index = 0; index < 5; index++) {
      await start(other, `echo${index}`, ["sh", "-c", `echo still-${index}`]);
      await other.closedOf(`echo${index}`);
      expect(other.output(`echo${index}`)).toBe(`still-${index}\n`);
    }
    await daemon.close();
    await vi.waitFor(() => expect(held.filter(isRunning)).toEqual([]), { timeout: 20_000 });
  });
});
