/**
 * process/read's `timestamps` extension: each retained chunk carries when the
 * daemon read it, so a recording made later (by a console that was not
 * watching) replays with the original timing.
 */
import { describe, expect, it } from "vitest";
import { connect, RpcRequestError } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";

describe("process/read with timestamps", () => {
  it("gives each chunk the time the daemon read it, and only when asked", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url);
    // The second line can only be printed after the test answers, so its time is bounded by causality, not by a sleep.
    const shell = await client.start({ argv: ["sh", "-c", "printf first; read answer; printf second"], pipeStdin: true });
    let seen = "";
    const first = new Promise<void>((resolve) => shell.onText((text) => (seen += text).includes("first") && resolve()));
    await first;
    const answeredAt = Date.now();
    await shell.write("\n");
    await shell.wait();

    const timed = await client.read(shell.processId, { timestamps: true });
    const text = timed.chunks.map((chunk) => Buffer.from(chunk.chunk, "base64").toString()).join("");
    expect(text).toBe("firstsecond");
    const times = timed.chunks.map((chunk) => chunk.timeMs!);
    expect(times.every((time) => Number.isInteger(time))).toBe(true);
    const firstChunk = timed.chunks.findIndex((chunk) => Buffer.from(chunk.chunk, "base64").toString().includes("first"));
    const secondChunk = timed.chunks.findIndex((chunk) => Buffer.from(chunk.chunk, "base64").toString().includes("second"));
    expect(secondChunk).toBeGreaterThan(firstChunk);
    // Read before the test saw it; the second one after the test answered (1 ms for rounding).
    expect(times[firstChunk]).toBeLessThanOrEqual(answeredAt + 1);
    expect(times[secondChunk]).toBeGreaterThanOrEqual(answeredAt - 1);
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    const plain = await client.read(shell.processId);
    expect(plain.chunks.length).toBe(timed.chunks.length);
    for (const chunk of plain.chunks) expect(chunk).not.toHaveProperty("timeMs");
    client.close();
  });

  it("refuses a timestamps flag that is not a boolean", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url);
    const echo = await client.start({ argv: ["echo", "x"] });
    await echo.wait();
    const refused = client.request("process/read", { processId: echo.processId, timestamps: "yes" as unknown as boolean });
    await expect(refused).rejects.toBeInstanceOf(RpcRequestError);
    await expect(refused).rejects.toMatchObject({ code: -32602 });
    client.close();
  });
});
