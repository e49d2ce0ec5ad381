/**
 * In a rapid exchange the daemon may hold a `process/write` reply until the
 * process answered (poll-after-input.ts): against a real daemon and `cat`,
 * every write is still answered, every byte echoed once and in order, and
 * some echoes come before their write's reply, which never happens when
 * the reply is sent as soon as the input is written.
 */
import { describe, expect, it } from "vitest";
import { spawnTestDaemon } from "./helpers/cli.js";
import { WireClient, type WireMessage } from "./helpers/wire-client.js";

/** Enough for a trial's polling blocks, which begin after its first 64 rapid writes. */
const MAX_WRITES = 3000;

describe("a write's reply in a rapid exchange", () => {
  it("may follow the process's echo, and every write is answered", async () => {
    // The widest window: an echo on a loaded CI machine still comes within it.
    const daemon = await spawnTestDaemon(["--poll-after-input-micros", "10000"]);
    const client = await WireClient.ready(daemon.url);
    await client.call("process/start", { processId: "cat", argv: ["cat"], cwd: "/", env: {}, pipeStdin: true });
    const isOutput = (message: WireMessage) => message.method === "process/output";
    let echoedFirst = false;
    let writes = 0;
    let lastSeq = 0;
    while (writes < MAX_WRITES && !echoedFirst) {
      const reply = client.request("process/write", { processId: "cat", chunk: Buffer.from("x").toString("base64"), writeId: `w${writes}` });
      const after = lastSeq;
      const echo = client.next((message) => isOutput(message) && Number(message.params!.seq) > after);
      const [answer, echoed] = await Promise.all([reply, echo]);
      lastSeq = Number(echoed.params!.seq);
      expect(answer.result).toEqual({ status: "accepted" });
      echoedFirst = client.messages.indexOf(echoed) < client.messages.indexOf(answer);
      writes++;
    }
    // A trial polls only once 64 writes came less than 1 ms apart; a CI machine too busy for that fails here.
    expect(echoedFirst, `no echo came before its write's reply in ${writes} writes`).toBe(true);
    expect(client.output("cat")).toBe("x".repeat(writes));
    client.close();
  });
});
