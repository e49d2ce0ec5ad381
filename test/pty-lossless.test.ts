/**
 * Every byte a PTY child writes before exiting reaches the client. node-pty's
 * own wrapper lost the tail of a burst when the event loop was busy as the
 * child exited; the process host reads a terminal until EIO, whatever the
 * daemon is doing. These run bursts-then-exit through a real daemon whose
 * event loop a client in the same process keeps busy, and count.
 */
import { describe, expect, it } from "vitest";
import { connect } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";
import { WireClient } from "./helpers/wire-client.js";

const BURST = 4_000_000;

/** Runs `argv` on a PTY through `url`, hogging the event loop (the daemon's too: the same process) for 1 ms per output event. */
async function burstWithBusyListener(url: string, argv = ["head", "-c", String(BURST), "/dev/zero"]): Promise<{ received: number; exitCode: number; output: Buffer }> {
  const client = await connect(url, { reconnect: false });
  try {
    const handle = await client.start({ argv, tty: true });
    const chunks: Buffer[] = [];
    let received = 0;
    handle.onOutput((event) => {
      received += event.data.length;
      chunks.push(Buffer.from(event.data));
      const until = Date.now() + 1;
      while (Date.now() < until) {
        // A busy daemon: encoding and sending other sessions' output.
      }
    });
    const exitCode = await handle.wait();
    return { received, exitCode, output: Buffer.concat(chunks) };
  } finally {
    client.close();
  }
}

describe("PTY output is lossless", () => {
  it("keeps every byte of a burst-then-exit child even when the event loop is busy", async () => {
    const daemon = await startTestDaemon();
    for (let run = 0; run < 5; run++) {
      const { received, exitCode } = await burstWithBusyListener(daemon.url);
      expect(received).toBe(BURST);
      expect(exitCode).toBe(0);
    }
  });

  it("keeps a fast writer's bytes in order, each once, however its reads are batched", async () => {
    const daemon = await startTestDaemon();
    const { output, exitCode } = await burstWithBusyListener(daemon.url, ["seq", "1", "300000"]);
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
