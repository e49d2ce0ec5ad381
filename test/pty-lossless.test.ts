/**
 * Every byte a PTY child writes before exiting reaches the client. node-pty's
 * own wrapper loses the tail of a burst when the event loop is busy as the
 * child exits (it destroys the stream 200 ms after exit); our PTY path reads
 * until EIO instead. Both tests run bursts-then-exit many times and count.
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawnPty } from "../server/dist/process/spawn-pty.js";
import { Spawner } from "../server/dist/spawner/spawner.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { WireClient } from "./helpers/wire-client.js";

const BURST = 4_000_000;

const spawner = new Spawner();
afterAll(() => spawner.stop());

/** Runs `argv` on a PTY with a listener that hogs the event loop, so the child writes ahead and the daemon reads in bursts. */
function burstWithBusyListener(argv = ["head", "-c", String(BURST), "/dev/zero"]): Promise<{ received: number; exitCode: number | null; output: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let exitCode: number | null = null;
    let ended = false;
    const done = () => resolve({ received, exitCode, output: Buffer.concat(chunks) });
    spawnPty(
      spawner,
      { file: argv[0]!, args: argv.slice(1), arg0: undefined, cwd: "/", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, pipeStdin: false, cols: 80, rows: 24, cgroup: undefined },
      {
        output: (_stream, data) => {
          received += data.length;
          chunks.push(Buffer.from(data));
          const until = Date.now() + 1;
          while (Date.now() < until) {
            // A busy daemon: encoding and sending other sessions' output.
          }
        },
        exited: (code) => {
          exitCode = code;
          if (ended) done();
        },
        streamEnded: () => {
          ended = true;
          if (exitCode !== null) done();
        },
      },
    ).catch(reject);
  });
}

describe("PTY output is lossless", () => {
  it("keeps every byte of a burst-then-exit child even when the event loop is busy", async () => {
    for (let run = 0; run < 5; run++) {
      const { received, exitCode } = await burstWithBusyListener();
      expect(received).toBe(BURST);
      expect(exitCode).toBe(0);
    }
  });

  it("keeps a fast writer's bytes in order, each once, however its reads are batched", async () => {
    const { output, exitCode } = await burstWithBusyListener(["seq", "1", "300000"]);
    expect(exitCode).toBe(0);
    // The terminal turns each newline into CR LF (onlcr).
    const expected = Array.from({ length: 300_000 }, (_, index) => `${index + 1}\r\n`).join("");
    expect(output.length).toBe(expected.length);
    expect(output.toString("latin1") === expected).toBe(true);
  });

  it("delivers every byte of 24 concurrent PTY bursts over the protocol", async () => {
    const daemon = await startTestDaemon({ retainedBytes: 64 * 1024 });
    const client = await WireClient.ready(daemon.url);
    const ids = Array.from({ length: 24 }, (_, index) => `burst-${index}`);
    await Promise.all(
      ids.map((processId) =>
        client.call("process/start", { processId, argv: ["head", "-c", "2000000", "/dev/zero"], cwd: "/", env: { PATH: process.env.PATH }, tty: true }),
      ),
    );
    await Promise.all(ids.map((processId) => client.closedOf(processId)));
    for (const processId of ids) {
      const bytes = client
        .notifications(processId)
        .filter((message) => message.method === "process/output")
        .reduce((sum, message) => sum + Buffer.from(String(message.params?.chunk), "base64").length, 0);
      expect(bytes, processId).toBe(2_000_000);
    }
  });
});
