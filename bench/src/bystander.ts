/**
 * The bystander of section 8, in a process of its own so that the cost of
 * building an attack (200,000 sends, a 15 MB frame) does not show up as its
 * stall. Forked with IPC by adversarial.ts: `{ url, token }` connects and
 * starts `cat`; then each "measure" starts echo round trips one after
 * another, and "stop" answers with their times since, in ms.
 */
import { connect, type ProcessHandle } from "@execmux/client";
import { echoOnce } from "./scenarios.js";

type Command = { kind: "connect"; url: string; token: string } | { kind: "measure" } | { kind: "stop" } | { kind: "exit" };

const send = (message: unknown) => process.send!(message);
let cat: ProcessHandle | undefined;
let close = () => undefined as void;
let running = false;
let samples: number[] = [];
let loop: Promise<void> = Promise.resolve();

async function echoLoop(handle: ProcessHandle): Promise<void> {
  while (running) samples.push(await echoOnce(handle));
}

process.on("message", (command: Command) => {
  void (async () => {
    switch (command.kind) {
      case "connect": {
        const client = await connect(command.url, { token: command.token, reconnect: false });
        close = () => client.close();
        cat = await client.start({ argv: ["cat"], pipeStdin: true });
        send({ kind: "ready" });
        return;
      }
      case "measure":
        running = true;
        samples = [];
        loop = echoLoop(cat!);
        return;
      case "stop":
        running = false;
        await loop;
        send({ kind: "echoes", samples });
        return;
      case "exit":
        close();
        process.exit(0);
    }
  })();
});
