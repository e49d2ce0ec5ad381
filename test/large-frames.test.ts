/**
 * Frames of a megabyte and more are decoded, parsed and checked on a worker
 * thread (rpc/off-thread-frames.ts). To a client nothing changes: the same
 * answers and refusals as for a frame parsed on the event loop, in the same
 * order, and the frames behind a large one wait for it. How long others
 * stall beside such frames is bench section 8's ("12 MB initialize frames").
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pathToFileUri } from "@execmux/shared";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

const MB = 1_000_000;

describe("large frames", () => {
  it("refuse and answer exactly as small ones do, in the order they came", async () => {
    const daemon = await startTestDaemon();
    // The same refusal for a 12 MB clientName as for a 300-character one.
    const small = await WireClient.connect(daemon.url);
    const smallRefusal = (await small.request("initialize", { clientName: "x".repeat(300) })).error;
    const large = await WireClient.connect(daemon.url);
    const largeRefusal = (await large.request("initialize", { clientName: "x".repeat(12 * MB) })).error;
    expect(largeRefusal).toEqual(smallRefusal);
    expect(largeRefusal?.code).toBe(-32602);

    // A large frame that is not JSON-RPC, then a small one: both answered with upstream's parse error, in order.
    const client = await WireClient.ready(daemon.url);
    client.sendRaw(`["${"x".repeat(2 * MB)}"]`);
    client.sendRaw("{not json");
    client.send({ id: "after", method: "process/list", params: {} });
    await client.next((message) => message.id === "after");
    const answers = client.messages.filter((message) => message.id === -1 || message.id === "after");
    expect(answers.map((message) => message.id)).toEqual([-1, -1, "after"]);
    expect(answers[0]!.error?.message).toContain("expected a JSON-RPC object");
    expect(answers[1]!.error?.message).not.toContain("expected a JSON-RPC object");
  });

  it("carry their data whole: a 6 MB fs/writeFile and a 1.2 MB process/write", async () => {
    const daemon = await startTestDaemon();
    const client = await WireClient.ready(daemon.url);
    const file = join(scratchDirectory("large-frames"), "written");
    const bytes = Buffer.alloc(6 * MB, 7);
    bytes.write("start", 0);
    bytes.write("end", bytes.length - 3);
    expect(await client.call("fs/writeFile", { path: pathToFileUri(file), dataBase64: bytes.toString("base64") })).toEqual({});
    expect(readFileSync(file).equals(bytes)).toBe(true);

    await client.call("process/start", { processId: "wc", argv: ["wc", "-c"], cwd: "/", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, pipeStdin: true });
    // 900 KB of input (under --max-stdin-buffer-bytes) is 1.2 MB of base64: a frame for the worker.
    const input = 900_000;
    expect(await client.call("process/write", { processId: "wc", chunk: Buffer.alloc(input, 120).toString("base64") })).toEqual({ status: "accepted" });
    await client.call("process/closeStdin", { processId: "wc" });
    await client.closedOf("wc");
    expect(client.output("wc").trim()).toBe(String(input));
  });
});
