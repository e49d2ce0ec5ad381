/** A fast writer's stdout pipe is deepened (deep-pipes.ts); a pipe that never fills keeps the kernel's size. */
import { execFileSync } from "node:child_process";
import { describe, expect, it, vi } from "vitest";
import { connect } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";
import { hostPidOf } from "./helpers/procfs.js";

const F_GETPIPE_SZ = 1032;

/** The size of the pipe at a process's descriptor, as the kernel reports it. */
function pipeSize(pid: number, fd: number): number {
  const script = `open(my $h, "+<", "/proc/${pid}/fd/${fd}") or die "$!"; print fcntl($h, ${F_GETPIPE_SZ}, 0)`;
  return Number(execFileSync("perl", ["-e", script]).toString());
}

describe("deep pipes", () => {
  it("gives a child that fills its stdout pipe a 1 MiB pipe, and leaves its quiet stderr at 64 KiB", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url, { binaryOutput: true });
    // The child reports its pid on stderr, then becomes a writer far faster than the daemon reads.
    const handle = await client.start({ argv: ["sh", "-c", "echo $$ >&2; exec cat /dev/zero"] });
    let pid = 0;
    let stdoutBytes = 0;
    handle.onOutput((event) => {
      if (event.stream === "stderr") pid = Number(Buffer.from(event.data).toString().trim());
      else stdoutBytes += event.data.length;
    });
    await vi.waitUntil(() => pid > 0 && stdoutBytes > 0, { timeout: 10_000 });
    const hostPid = hostPidOf(pid, daemon);
    await vi.waitUntil(() => pipeSize(hostPid, 1) === 1024 * 1024, { timeout: 10_000, interval: 20 });
    expect(pipeSize(hostPid, 2)).toBe(64 * 1024);
    await handle.terminate();
    client.close();
    await daemon.close();
  });
});
