/**
 * `execmux serve --listen stdio` as a real child process, driven through its
 * stdin and stdout the way Codex starts a stdio exec-server (or through ssh),
 * and compared with upstream's `codex exec-server --listen stdio`.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "@execmux/shared";
import { StdioTransport } from "../server/dist/transport/stdio-transport.js";
import { CLI, runCli } from "./helpers/cli.js";
import { hostPidOf, isRunning } from "./helpers/procfs.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { StdioPeer } from "./helpers/stdio-peer.js";
import { upstreamCodex } from "./helpers/upstream.js";

const start = (processId: string, script: string) => ({
  processId,
  argv: ["/bin/sh", "-c", script],
  cwd: "file:///tmp",
  env: { PATH: "/usr/bin:/bin" },
  tty: false,
  arg0: null,
});

const closedOf = (peer: StdioPeer, processId: string) =>
  peer.next((message) => message.method === "process/closed" && message.params?.processId === processId);

function upstreamStdio(): StdioPeer {
  const home = scratchDirectory("upstream-home");
  mkdirSync(join(home, ".codex"));
  return StdioPeer.spawn(upstreamCodex(), ["exec-server", "--listen", "stdio"], { HOME: home, CODEX_HOME: join(home, ".codex") });
}

describe("execmux serve --listen stdio", () => {
  it("speaks upstream's protocol as JSON lines: initialize, process/start, output; stdout carries nothing else", async () => {
    const peer = StdioPeer.execmux();
    // binaryOutput cannot travel on stdio: asked for, it is ignored and output stays JSON.
    const init = await peer.ready({ binaryOutput: true });
    expect(init.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await peer.call("process/start", start("hello", "printf 'hello from stdio\\n'; exit 3"))).toEqual({
      processId: "hello",
      sandboxType: "none",
    });
    await closedOf(peer, "hello");
    expect(peer.output("hello")).toBe("hello from stdio\n");
    expect(peer.messages.find((message) => message.method === "process/exited")?.params).toMatchObject({ exitCode: 3 });

    // Every stdout line was one JSON message: no URL line, no log line.
    expect(peer.lines.length).toBe(peer.messages.length);
    expect(peer.lines.some((line) => line.startsWith("ws://"))).toBe(false);
    expect(peer.stderr).toContain("speaking JSON-RPC on stdin and stdout");
  });

  it("skips blank lines and answers a malformed line with upstream's stdio parse error (id -1), then goes on", async () => {
    const peer = StdioPeer.execmux();
    await peer.ready();
    peer.write("\n   \r\n\t\n");
    peer.write("{not json\n");
    const error = await peer.next((message) => message.id === -1);
    expect(error.error?.code).toBe(ErrorCode.InvalidRequest);
    expect(error.error?.message).toMatch(/^failed to parse JSON-RPC message from exec-server stdio: ./);
    // The session is still there, and the blank lines got no answer at all.
    expect(await peer.call("environment/status")).toEqual({ status: "ready" });
    expect(peer.messages.filter((message) => message.id === -1)).toHaveLength(1);
  });

  it("bounds a line: one past --max-message-bytes gets a parse error naming the limit, then the daemon ends", async () => {
    const limit = 64 * 1024;
    const peer = StdioPeer.execmux(["--max-message-bytes", String(limit)]);
    await peer.ready();
    // Just under the bound is an ordinary message.
    const padded = JSON.stringify({ id: 99, method: "environment/status" });
    peer.write(`${padded}${" ".repeat(limit - padded.length)}\n`);
    expect((await peer.next((message) => message.id === 99)).result).toEqual({ status: "ready" });

    // A line that never ends is not held without limit: the daemon stops at the bound.
    peer.write(`{"id":100,"method":"environment/status","params":"${"x".repeat(4 * limit)}`);
    const error = await peer.next((message) => message.id === -1);
    expect(error.error).toEqual({
      code: ErrorCode.InvalidRequest,
      message: `failed to parse JSON-RPC message from exec-server stdio: message exceeds the limit of ${limit} bytes (--max-message-bytes)`,
    });
    expect(await peer.exited).toEqual({ code: 0, signal: null });
    expect(peer.messages.some((message) => message.id === 100)).toBe(false);
  });

  it("answers what it already read when stdin ends, then exits and leaves no process behind", async () => {
    const peer = StdioPeer.execmux(["--kill-grace-ms", "200"]);
    await peer.ready();
    await peer.call("process/start", start("sleeper", "echo $$; exec sleep 1000"));
    // One that ignores SIGTERM: the grace period ends in SIGKILL.
    await peer.call("process/start", start("stubborn", "trap '' TERM; echo $$; while :; do sleep 1; done"));
    await vi.waitFor(() => expect(peer.output("sleeper")).toMatch(/^\d+\n$/));
    await vi.waitFor(() => expect(peer.output("stubborn")).toMatch(/^\d+\n$/));
    const pids = [Number(peer.output("sleeper")), Number(peer.output("stubborn"))].map((pid) => hostPidOf(pid, peer.child.pid!));
    expect(pids.every(isRunning)).toBe(true);

    // A request followed at once by the end of input still gets its reply.
    peer.send({ id: 50, method: "process/list", params: {} });
    peer.closeInput();
    expect(await peer.exited).toEqual({ code: 0, signal: null });
    const listed = peer.messages.find((message) => message.id === 50)?.result as { processes: { processId: string }[] } | undefined;
    expect(listed?.processes.map((entry) => entry.processId).sort()).toEqual(["sleeper", "stubborn"]);
    await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]));
    expect(peer.stderr).toContain("end of the stdio connection");
  });

  it("refuses listener options that cannot protect stdio, rather than pretend they do", async () => {
    const refused = await runCli(["serve", "--listen", "stdio", "--token", "s3cret"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--token cannot apply to --listen stdio/);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).not.toContain("s3cret");
  });

  it("accepts upstream's stdio:// spelling", async () => {
    const peer = StdioPeer.spawn(process.execPath, [CLI, "serve", "--listen", "stdio://"]);
    expect((await peer.ready()).sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("against upstream's codex exec-server --listen stdio", () => {
  it("frames, words parse errors, runs a process and ends on stdin's end the same way", async () => {
    for (const peer of [StdioPeer.execmux(), upstreamStdio()]) {
      await peer.ready();
      peer.write("\n  \n{not json\n");
      const error = await peer.next((message) => message.id === -1);
      expect(error.error?.code).toBe(-32600);
      expect(error.error?.message.split(": ")[0]).toBe("failed to parse JSON-RPC message from exec-server stdio");

      await peer.call("process/start", start("p", "printf same"));
      await closedOf(peer, "p");
      expect(peer.output("p")).toBe("same");
      expect(peer.lines.length).toBe(peer.messages.length);

      peer.closeInput();
      expect(await peer.exited).toEqual({ code: 0, signal: null });
    }
  });
});


describe("StdioTransport's framing", () => {
  function transport(maxLineBytes = 64) {
    const input = new PassThrough();
    const output = new PassThrough();
    const stdio = new StdioTransport(input, output, maxLineBytes);
    const messages: string[] = [];
    const tooLarge: number[] = [];
    stdio.onMessage((data) => messages.push(data.toString()));
    stdio.onTooLarge((limit) => tooLarge.push(limit));
    const inputEnded = new Promise<void>((resolve) => stdio.onInputEnd(resolve));
    return { input, output, stdio, messages, tooLarge, inputEnded };
  }

  it("cuts lines wherever the reads split them, and counts the bound across reads", async () => {
    const { input, messages, tooLarge, inputEnded } = transport(16);
    for (const piece of ['{"a"', ":1}\r\n\n", '{"b":2}\n{"c"', ":3}\n", "  \n", '{"last":4}']) input.write(piece);
    input.end();
    await inputEnded;
    expect(messages).toEqual(['{"a":1}\r', '{"b":2}', '{"c":3}', '{"last":4}']);
    expect(tooLarge).toEqual([]);

    const bounded = transport(16);
    bounded.input.write('{"x":"0123');
    bounded.input.write('4567890"}\n{"y":1}\n');
    expect(bounded.tooLarge).toEqual([16]);
    expect(bounded.messages).toEqual([]); // nothing after the bound is read
  });

  it("writes one line per message and reports the close once stdout has written everything", async () => {
    const { output, stdio } = transport();
    const written: string[] = [];
    output.on("data", (chunk: Buffer) => written.push(chunk.toString()));
    const closed = new Promise<void>((resolve) => stdio.onClose(resolve));
    const sent = new Promise<Error | undefined>((resolve) => stdio.send('{"id":1,"result":{}}', resolve));
    stdio.close();
    expect(stdio.isOpen).toBe(false);
    await closed;
    expect(await sent).toBeUndefined();
    expect(written.join("")).toBe('{"id":1,"result":{}}\n');
    expect(() => stdio.send(Buffer.from([1, 2]), () => undefined)).toThrow(/binary messages cannot travel on stdio/);
    expect(stdio.carriesBinary).toBe(false);
  });
});
