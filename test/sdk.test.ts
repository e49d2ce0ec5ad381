/** The client SDK against a real daemon. */
import { describe, expect, it, vi } from "vitest";
import { connect, DisconnectedError, ErrorCode, RpcRequestError } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";

const text = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString("utf8");

describe("client SDK", () => {
  it("starts a process, streams its output in order and returns its exit code", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url, { clientName: "sdk-test" });
    expect(client.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const handle = await client.start({ argv: ["sh", "-c", "echo out; echo err >&2; exit 5"] });
    const byStream: Record<string, Uint8Array[]> = { stdout: [], stderr: [] };
    for await (const event of handle) byStream[event.stream]!.push(event.data);
    expect(text(byStream.stdout!)).toBe("out\n");
    expect(text(byStream.stderr!)).toBe("err\n");
    expect(await handle.wait()).toBe(5);
    expect(handle.exitCode).toBe(5);
    client.close();
  });

  it("writes, closes stdin, resizes, signals and terminates through the handle", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url);

    const cat = await client.start({ argv: ["cat"], pipeStdin: true });
    const seen: Uint8Array[] = [];
    cat.onOutput((event) => seen.push(event.data));
    expect(await cat.write("héllo\n")).toBe("accepted");
    expect(await cat.write(new Uint8Array([0xe2, 0x82, 0xac, 0x0a]))).toBe("accepted");
    expect(await cat.closeStdin()).toBe("accepted");
    expect(await cat.wait()).toBe(0);
    expect(text(seen)).toBe("héllo\n€\n");

    const pty = await client.start({ argv: ["sh", "-c", "read x; stty size"], tty: true, cols: 50, rows: 10 });
    await pty.resize(132, 43);
    await pty.write("\n");
    const ptyOut: Uint8Array[] = [];
    for await (const event of pty) ptyOut.push(event.data);
    expect(text(ptyOut)).toContain("43 132");

    const sleeper = await client.start({ argv: ["sleep", "60"] });
    await sleeper.signal("SIGUSR1");
    expect(await sleeper.wait()).toBe(128 + 10);

    const another = await client.start({ argv: ["sleep", "60"] });
    expect(await another.terminate()).toBe(true);
    expect(await another.wait()).toBe(128 + 15);
    expect(await another.terminate()).toBe(false);
    client.close();
  });

  it("lists processes and reads retained output the upstream way", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url);
    const handle = await client.start({ processId: "listed", argv: ["echo", "retained"] });
    await handle.wait();
    const [info] = await client.list();
    expect(info).toMatchObject({ processId: "listed", state: "closed", exitCode: 0, nextSeq: 4 });
    // The output is seq 1 or 2: the exit event may be numbered before it.
    expect([1, 2]).toContain(info!.firstRetainedSeq);
    const read = await client.read("listed", { afterSeq: 0 });
    expect(Buffer.from(read.chunks[0]!.chunk, "base64").toString()).toBe("retained\n");
    client.close();
  });

  it("with manualAcks, lets the daemon send only what the application acknowledged it consumed", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url, { ackWindowBytes: 65_536, manualAcks: true });
    const handle = await client.start({ argv: ["head", "-c", "1000000", "/dev/zero"] });
    const consumed: Uint8Array[] = [];
    handle.onOutput((event) => consumed.push(event.data));
    const flood = () => daemon.registry.all()[0]!.find(handle.processId)!;
    await vi.waitUntil(() => flood().paused && consumed.length > 0);
    const delivered = () => consumed.reduce((sum, chunk) => sum + chunk.length, 0);
    // One chunk may cross the window before the pause takes effect.
    expect(delivered()).toBeLessThanOrEqual(2 * 65_536);
    // And it stays paused: a round trip after everything the client sent so
    // far (automatic acks would have arrived, and resumed it, by then).
    await client.list();
    expect(flood().paused).toBe(true);
    // The application "renders" what it has, and acknowledges it; then more comes.
    let closed = false;
    handle.onClose(() => (closed = true));
    let acked = 0;
    await vi.waitUntil(
      () => {
        handle.ack(delivered() - acked);
        acked = delivered();
        return closed;
      },
      { timeout: 20_000, interval: 5 },
    );
    await handle.wait();
    expect(delivered()).toBe(1_000_000);
    client.close();
  });

  it("tells an onExit or onClose listener added after the fact, once", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url);
    const handle = await client.start({ argv: ["sh", "-c", "exit 3"] });
    await handle.wait();
    const exits: number[] = [];
    let closes = 0;
    handle.onExit((code) => exits.push(code));
    handle.onClose(() => closes++);
    const removed = vi.fn();
    handle.onExit(removed)();
    await client.list(); // a round trip: any microtask has run by now
    expect(exits).toEqual([3]);
    expect(closes).toBe(1);
    expect(removed).not.toHaveBeenCalled();
    client.close();
  });

  it("turns daemon errors into RpcRequestError with the protocol's code", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url);
    const failure = await client.start({ argv: ["sh"], cwd: "relative/dir" }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RpcRequestError);
    expect((failure as RpcRequestError).code).toBe(ErrorCode.InvalidParams);
    client.close();
  });

  it("without reconnect, fails requests in flight with DisconnectedError when the socket drops", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url, { reconnect: false });
    const handle = await client.start({ processId: "idle", argv: ["sleep", "60"] });
    const disconnected = vi.fn();
    client.onDisconnected(disconnected);
    const pending = client.read("idle", { afterSeq: 0, waitMs: 30_000 }).catch((error: unknown) => error);
    await daemon.close();
    expect(await pending).toBeInstanceOf(DisconnectedError);
    expect(disconnected).toHaveBeenCalledOnce();
    await expect(handle.write("x")).rejects.toBeInstanceOf(DisconnectedError);
  });

  it("refuses to connect to a daemon that is not there with a clear error", async () => {
    await expect(connect("ws://127.0.0.1:1")).rejects.toThrow(/cannot connect to ws:\/\/127\.0\.0\.1:1/);
  });
});
