/**
 * Daemon-wide budgets, per client and for the daemon (issue #34, item 4).
 *
 * Descriptors: Mallory opens every fs/open handle she can on many
 * connections; Alice, another client, still connects, opens and reads
 * files, makes http requests and starts processes, and /readyz stays ready.
 * The daemon runs with an open-file limit of 1,024 (prlimit), so the
 * defaults apply: all but 256 for clients, a quarter of that (192) for one.
 *
 * Buffered http bodies: Mallory asks for 32 bodies of 16 MiB on a
 * connection she never reads (1.1 GB of daemon memory before); the daemon
 * holds what her budget allows, Alice still gets hers, and all of it is
 * given back when Mallory leaves.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it, vi } from "vitest";
import { pathToFileUri } from "@execmux/shared";
import { CLI, spawnTestDaemon } from "./helpers/cli.js";
import { httpUrl, metric } from "./helpers/http.js";
import { daemonResidentBytes } from "./helpers/procfs.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

const [ALICE, MALLORY] = ["alice-descriptors-0001", "mallory-descriptors-0002"];
const PROCESS_LIMIT = 1024;
/** The defaults at that limit: 1,024 less 256 kept back, a quarter of it per client. */
const PER_CLIENT = (PROCESS_LIMIT - 256) / 4;
const PATH = process.env.PATH ?? "/usr/bin:/bin";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `execmux serve` (default: a process host) with RLIMIT_NOFILE at `limit`, stopped after the test. */
async function daemonWithFileLimit(limit: number, tokenFile: string): Promise<string> {
  const child = spawn("prlimit", [`--nofile=${limit}:${limit}`, process.execPath, CLI, "serve", "--listen", "ws://127.0.0.1:0", "--log-level", "warn", "--token-file", tokenFile], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  cleanups.push(async () => {
    if (child.exitCode !== null) return;
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the daemon exited (${code}): ${stderr}`)));
  });
}

async function httpTarget(body: Buffer | string = "hello from the target"): Promise<string> {
  const server: Server = createServer((_request, response) => response.end(body));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const text = (base64: unknown) => Buffer.from(String(base64), "base64").toString();

describe("descriptors", () => {
  it("one client holding every descriptor it can leaves the others theirs: they connect, open, fetch and start", async () => {
    const directory = scratchDirectory("descriptors");
    const tokenFile = join(directory, "tokens");
    writeFileSync(tokenFile, `${ALICE}\n${MALLORY}\n`);
    const file = join(directory, "data.txt");
    writeFileSync(file, "some bytes\n");
    const url = await daemonWithFileLimit(PROCESS_LIMIT, tokenFile);
    const target = await httpTarget();

    // Mallory: 8 connections, each asking for its 128 handles: more than the process could hold at all.
    const mallory = await Promise.all(Array.from({ length: 8 }, () => WireClient.ready(url, MALLORY)));
    const opens = mallory.flatMap((client, connection) =>
      Array.from({ length: 128 }, (_, index) => client.request("fs/open", { handleId: `h${connection}-${index}`, path: pathToFileUri(file) })),
    );
    const replies = await Promise.all(opens);
    const opened = replies.filter((reply) => reply.result !== undefined).length;
    const refusals = replies.filter((reply) => reply.error !== undefined).map((reply) => reply.error);
    // Her connections and her handles together: her share, no more.
    expect(opened + mallory.length).toBe(PER_CLIENT);
    expect(new Set(refusals.map((error) => JSON.stringify([error?.code, error?.data])))).toEqual(new Set([JSON.stringify([-32011, { limit: "maxDescriptorsPerClient" }])]));

    // Alice, meanwhile: new connections, files opened and read, http requests, processes on pipes and on a terminal.
    const alice = await Promise.all(Array.from({ length: 4 }, () => WireClient.ready(url, ALICE)));
    const first = alice[0]!;
    for (let index = 0; index < 20; index++) await first.call("fs/open", { handleId: `a${index}`, path: pathToFileUri(file) });
    expect(text((await first.call("fs/readBlock", { handleId: "a7", offset: 0, len: 64 })).chunk)).toBe("some bytes\n");
    expect(text((await first.call("fs/readFile", { path: pathToFileUri(file) })).dataBase64)).toBe("some bytes\n");
    const fetched = await Promise.all(
      alice.map((client, index) => client.call("http/request", { method: "GET", url: target, headers: [], requestId: `r${index}` })),
    );
    for (const reply of fetched) expect(text(reply.bodyBase64)).toBe("hello from the target");
    for (const tty of [false, true]) {
      const processId = tty ? "on-a-terminal" : "on-pipes";
      await first.call("process/start", { processId, argv: ["sh", "-c", "echo started"], cwd: "/", env: { PATH }, tty });
      await first.closedOf(processId);
      expect(first.output(processId)).toContain("started");
    }
    expect((await fetch(`${httpUrl(url)}/readyz`)).status).toBe(200);

    // Mallory leaves: what she held is given back, and she may open again.
    for (const client of mallory) {
      client.close();
      await client.closed;
    }
    const back = await WireClient.ready(url, MALLORY);
    const again = await Promise.all(Array.from({ length: 100 }, (_, index) => back.request("fs/open", { handleId: `again-${index}`, path: pathToFileUri(file) })));
    expect(again.filter((reply) => reply.error !== undefined)).toEqual([]);
  });
});

describe("buffered http bodies", () => {
  const MiB = 1024 * 1024;
  // Mallory's one reply in the daemon (its body, base64, reply and frame: about 80 MiB), Alice's
  // own while it is built, and garbage not yet collected. Before: 1.1 GB for Mallory's alone.
  const BOUND = 384 * MiB;
  const inUse = (url: string) => metric(url, "execmux_budget_in_use", 'budget="http_body_bytes"');

  it(`hold a client that never reads to one reply at a time: the daemon grows by less than ${BOUND / MiB} MiB, and gets it all back when the client leaves`, async () => {
    const tokenFile = join(scratchDirectory("bodies"), "tokens");
    writeFileSync(tokenFile, `${ALICE}\n${MALLORY}\n`);
    const daemon = await spawnTestDaemon(["--token-file", tokenFile, "--metrics-need-token", "false"]);
    const target = await httpTarget(Buffer.alloc(16 * MiB - 1024, "b"));
    const before = daemonResidentBytes(daemon.pid);

    const mallory = await WireClient.ready(daemon.url, MALLORY);
    mallory.pauseReading();
    for (let index = 0; index < 32; index++) {
      mallory.send({ id: 100 + index, method: "http/request", params: { method: "GET", url: target, headers: [], requestId: `m${index}` } });
    }
    await vi.waitFor(async () => expect(await inUse(daemon.url)).toBeGreaterThan(0), { timeout: 20_000 });

    // Alice's body is hers to have meanwhile.
    const alice = await WireClient.ready(daemon.url, ALICE);
    const reply = await alice.call("http/request", { method: "GET", url: target, headers: [], requestId: "a" });
    expect(Buffer.from(String(reply.bodyBase64), "base64").length).toBe(16 * MiB - 1024);
    expect(daemonResidentBytes(daemon.pid) - before).toBeLessThan(BOUND);

    // She walks away (a close frame would wait behind the replies she never took).
    mallory.terminate();
    await vi.waitFor(async () => expect(await inUse(daemon.url)).toBe(0), { timeout: 20_000 });
    expect(await metric(daemon.url, "execmux_budget_in_use", 'budget="descriptors"')).toBe(1);
  });
});
