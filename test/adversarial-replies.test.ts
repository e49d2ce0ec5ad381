/**
 * Issue #22's reply budget, for the two answers that can be far larger than
 * the request that asks for them: the replay of a resume with cursors, and
 * fs/readFile. Each against a real daemon (a child process, so its memory is
 * its own): the daemon's resident memory stays under a stated bound while
 * the client reads slowly or not at all, and nothing is lost or doubled.
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { spawnTestDaemon } from "./helpers/cli.js";
import { metric } from "./helpers/http.js";
import { daemonResidentBytes } from "./helpers/procfs.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient, b64, unb64, type WireMessage } from "./helpers/wire-client.js";

const MiB = 1024 * 1024;

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

describe("a resume that is owed the output of many processes", () => {
  const PROCESSES = 50;
  const BYTES_EACH = 2 * MiB;
  // The replay is 100 MiB of output, 133 MiB as base64: queued at once, as
  // before the replay was paced, it grew the daemon by more than that.
  const BOUND = 48 * MiB;

  /** Process k's output: numbered lines, so a reordered or doubled chunk changes the hash. */
  const expectedOutput = (k: number) => {
    const lines: string[] = [];
    for (let line = 1, length = 0; length < BYTES_EACH; line++) {
      const text = `p${k} ${line}\n`;
      lines.push(text);
      length += text.length;
    }
    return lines.join("").slice(0, BYTES_EACH);
  };

  it(`replays as a slow client reads: the daemon grows by less than ${BOUND / MiB} MiB, every byte arrives once and in order`, async () => {
    const daemon = await spawnTestDaemon(["--retained-bytes", String(4 * MiB), "--closed-retention-ms", "600000"]);
    const first = await WireClient.connect(daemon.url);
    const { sessionId } = await first.call<{ sessionId: string }>("initialize", { clientName: "before" });
    first.send({ method: "initialized" });
    const ids = Array.from({ length: PROCESSES }, (_, k) => `p${k}`);
    for (const [k, processId] of ids.entries()) {
      const command = `seq -f 'p${k} %g' 1 300000 | head -c ${BYTES_EACH}`;
      await first.call("process/start", { processId, argv: ["sh", "-c", command], cwd: "/", env: {} });
    }
    // The client goes away; the processes finish while the session is detached.
    first.close();
    await first.closed;
    await vi.waitFor(async () => expect(await metric(daemon.url, "execmux_processes_exited_total")).toBe(PROCESSES), { timeout: 30_000 });
    const before = daemonResidentBytes(daemon.pid);

    const second = await WireClient.connect(daemon.url);
    let reads = 0;
    let peak = before;
    const stopThrottling = second.throttleReading(1, () => {
      if (++reads % 16 === 0) peak = Math.max(peak, daemonResidentBytes(daemon.pid));
    });
    const cursors = Object.fromEntries(ids.map((processId) => [processId, 0]));
    const reply = await second.request("initialize", { clientName: "after", resumeSessionId: sessionId, cursors });
    expect(reply.result).toMatchObject({ sessionId, unknownProcessIds: [] });
    await Promise.all(ids.map((processId) => second.closedOf(processId)));
    stopThrottling();

    expect(peak - before).toBeLessThan(BOUND);
    for (const [k, processId] of ids.entries()) {
      const events = second.notifications(processId);
      const seqs = events.map((event: WireMessage) => Number(event.params?.seq));
      // Nothing doubled, nothing reordered, no gap: seqs rise by one from 1.
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
      // closed is last and exited comes once; exited may precede the last
      // output (the daemon publishes it 50 ms after the reap if the pipes have
      // not ended by then, which a loaded machine can take).
      expect(events.at(-1)?.method).toBe("process/closed");
      expect(events.filter((event) => event.method === "process/exited")).toHaveLength(1);
      const output = Buffer.concat(
        events.filter((event) => event.method === "process/output").map((event) => Buffer.from(String(event.params?.chunk), "base64")),
      );
      expect(sha256(output)).toBe(sha256(expectedOutput(k)));
    }
  });
});

describe("a process whose replay has caught up", () => {
  it("runs again and its live output follows the replay, seqs dense, nothing doubled", async () => {
    const daemon = await spawnTestDaemon(["--retained-bytes", String(4 * MiB)]);
    const first = await WireClient.connect(daemon.url);
    const { sessionId } = await first.call<{ sessionId: string }>("initialize", { clientName: "before" });
    first.send({ method: "initialized" });
    const argv = ["sh", "-c", "seq 1 100000; read x; echo \"after $x\""];
    await first.call("process/start", { processId: "waits", argv, cwd: "/", env: {}, pipeStdin: true });
    await first.next((message) => message.method === "process/output" && String(unb64(message.params?.chunk)).endsWith("100000\n"));
    first.close();
    await first.closed;

    const second = await WireClient.connect(daemon.url);
    await second.call("initialize", { clientName: "after", resumeSessionId: sessionId, cursors: { waits: 0 } });
    second.send({ method: "initialized" });
    await second.next((message) => message.method === "process/output" && String(unb64(message.params?.chunk)).endsWith("100000\n"));
    // Paused while it was replayed: it must read and print again now.
    await second.call("process/write", { processId: "waits", chunk: b64("go\n") });
    await second.closedOf("waits");
    const seqs = second.notifications("waits").map((event) => Number(event.params?.seq));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
    const lines = Array.from({ length: 100_000 }, (_, index) => `${index + 1}\n`).join("");
    expect(second.output("waits")).toBe(`${lines}after go\n`);
  });
});

describe("fs/readFile from a client that never reads", () => {
  const REQUESTS = 200;
  const FILE_BYTES = 10_000_000;
  // One reply is 13.3 MB of base64; the file, its base64 and the frame are
  // briefly held together while it is built. 200 of them held at once would be 2.7 GB.
  const BOUND = 96 * MiB;

  it("answers a large file on a connection whose process keeps the socket busy with output", async () => {
    const path = join(scratchDirectory("read-file-busy"), "ten-megabytes");
    writeFileSync(path, Buffer.alloc(FILE_BYTES, "y"));
    const daemon = await spawnTestDaemon();
    const client = await WireClient.connect(daemon.url);
    await client.call("initialize", { clientName: "busy", binaryOutput: true });
    client.send({ method: "initialized" });
    // Output as fast as the client takes it, dropped as it arrives.
    const discard = setInterval(() => (client.binaryFrames.length = 0), 10);
    onTestFinished(() => {
      clearInterval(discard);
      client.close();
    });
    await client.call("process/start", { processId: "flood", argv: ["cat", "/dev/zero"], cwd: "/", env: {} });
    await client.next((message) => message.method === "binary");
    const read = await client.call<{ dataBase64: string }>("fs/readFile", { path });
    expect(Buffer.from(read.dataBase64, "base64").length).toBe(FILE_BYTES);
  });

  it(`holds one reply at a time: the daemon grows by less than ${BOUND / MiB} MiB and a bystander is served`, async () => {
    const path = join(scratchDirectory("read-file-budget"), "ten-megabytes");
    writeFileSync(path, Buffer.alloc(FILE_BYTES, "x"));
    const daemon = await spawnTestDaemon();
    const bystander = await WireClient.ready(daemon.url);
    const attacker = await WireClient.ready(daemon.url);
    const answered = () => metric(daemon.url, "execmux_request_duration_seconds_count", `method="fs/readFile"`);
    // The daemon loads its metrics library on the first scrape: that is not the attack's doing.
    await answered();
    const before = daemonResidentBytes(daemon.pid);

    attacker.pauseReading();
    for (let index = 0; index < REQUESTS; index++) attacker.send({ id: 1000 + index, method: "fs/readFile", params: { path } });
    // The first reply is built; it fills the budget, and the others wait for room.
    await vi.waitFor(async () => expect(await answered()).toBeGreaterThan(0), { timeout: 10_000 });
    // Another session reads the same file and runs a process meanwhile.
    const read = await bystander.call<{ dataBase64: string }>("fs/readFile", { path });
    expect(Buffer.from(read.dataBase64, "base64").length).toBe(FILE_BYTES);
    await bystander.call("process/start", { processId: "echo", argv: ["echo", "still serving"], cwd: "/", env: {} });
    await bystander.closedOf("echo");
    expect(bystander.output("echo")).toBe("still serving\n");
    expect(daemonResidentBytes(daemon.pid) - before).toBeLessThan(BOUND);
    // The attacker's first reply and the bystander's; the others wait (a
    // kernel with larger socket buffers than the reply may take one or two whole).
    expect(await answered()).toBeLessThanOrEqual(4);
    expect(daemon.child.exitCode).toBeNull();
    // They waited, not failed: once the client reads, they come in order.
    attacker.resumeReading();
    for (let index = 0; index < 3; index++) {
      const reply = await attacker.next((message) => message.id === 1000 + index);
      expect(Buffer.from(String(reply.result?.dataBase64), "base64").length).toBe(FILE_BYTES);
    }
    attacker.close();
    bystander.close();
  });
});
