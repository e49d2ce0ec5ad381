/**
 * What the SDK does when the daemon refuses it outright, instead of
 * reconnecting in a loop: a message over --max-message-bytes, and a session
 * another client took over.
 */
import { describe, expect, it } from "vitest";
import { connect, MessageTooLargeError, SessionLostError } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";
import { spawnDaemon } from "./helpers/cli.js";

const MAX_MESSAGE_BYTES = 64 * 1024;

describe("a write larger than the daemon's --max-message-bytes", () => {
  it("fails with MessageTooLargeError, is never sent again, and the process carries on", async () => {
    const daemon = await startTestDaemon({ maxMessageBytes: MAX_MESSAGE_BYTES });
    const client = await connect(daemon.url);
    const disconnects: string[] = [];
    client.on("disconnected", (reason) => disconnects.push(reason));
    const cat = await client.start({ argv: ["cat"], pipeStdin: true });
    let echoed = "";
    cat.onOutput((event) => (echoed += Buffer.from(event.data).toString()));

    const oversized = cat.write(new Uint8Array(4 * MAX_MESSAGE_BYTES).fill(0x61));
    await expect(oversized).rejects.toBeInstanceOf(MessageTooLargeError);
    await expect(oversized).rejects.toThrow(/^process\/write: the message \(\d+ bytes\) is larger than the daemon accepts/);
    // The daemon closed the socket for it once (1009); the session resumed.
    expect(disconnects).toEqual(["socket closed (1009)"]);

    // As large again: refused by the client itself, no second disconnect.
    await expect(cat.write(new Uint8Array(4 * MAX_MESSAGE_BYTES))).rejects.toBeInstanceOf(MessageTooLargeError);
    expect(await cat.write("small\n")).toBe("accepted");
    await cat.closeStdin();
    expect(await cat.wait()).toBe(0);
    expect(echoed).toBe("small\n");
    expect(disconnects).toHaveLength(1);
    client.close();
  });

  it("costs the daemon one warning line, not a stack trace", async () => {
    const daemon = await spawnDaemon(["--listen", "ws://127.0.0.1:0", "--max-message-bytes", String(MAX_MESSAGE_BYTES)]);
    const client = await connect(daemon.url);
    const cat = await client.start({ argv: ["cat"], pipeStdin: true });
    await expect(cat.write(new Uint8Array(4 * MAX_MESSAGE_BYTES))).rejects.toBeInstanceOf(MessageTooLargeError);
    client.close();
    daemon.child.kill("SIGTERM");
    await daemon.exited;
    const lines = daemon.stderr().trim().split("\n").map((line) => JSON.parse(line) as { level: number; msg: string; err?: unknown });
    expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual(["closing the connection: Max payload size exceeded"]);
    expect(lines.filter((line) => line.err !== undefined)).toEqual([]);
  });
});

describe("a session another client takes over", () => {
  it("ends the first client with SessionLostError instead of taking it back", async () => {
    const daemon = await startTestDaemon();
    const first = await connect(daemon.url);
    const sleeper = await first.start({ argv: ["sleep", "30"] });
    const reconnects: number[] = [];
    first.on("reconnecting", ({ attempt }) => reconnects.push(attempt));
    const lost = new Promise<SessionLostError>((resolve) => first.on("sessionLost", resolve));

    const second = await connect(daemon.url, { resume: { sessionId: first.sessionId, processes: [sleeper.processId] } });
    expect((await lost).message).toBe(`session ${first.sessionId} was taken over by another connection`);
    await expect(sleeper.wait()).rejects.toBeInstanceOf(SessionLostError);
    expect(reconnects).toEqual([]);
    // The second keeps it.
    expect(second.connected).toBe(true);
    expect((await second.list()).map((process) => process.processId)).toEqual([sleeper.processId]);
    second.close();
  });

  it("with takeover: false, refuses to connect and names the client holding the session", async () => {
    const daemon = await startTestDaemon();
    const holder = await connect(daemon.url, { clientName: "the holder" });
    await expect(connect(daemon.url, { resume: { sessionId: holder.sessionId, takeover: false } })).rejects.toThrow(
      new RegExp(`session ${holder.sessionId} is already attached to another connection \\(client "the holder", attached \\d+ s ago\\)`),
    );
    expect(holder.connected).toBe(true);
    holder.close();
  });
});
