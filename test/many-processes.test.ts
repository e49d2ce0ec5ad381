/** 200 processes on one socket, output interleaved, every byte accounted for. */
import { describe, expect, it } from "vitest";
import { connect } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";

describe("many processes on one socket", () => {
  it("runs 200 processes at once and delivers each one's exact output", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url);
    const count = 200;
    const lines = 300;
    const handles = await Promise.all(
      Array.from({ length: count }, (_, index) =>
        client.start({
          processId: `proc-${index}`,
          // Each process prints its own id on every line, so any mix-up shows.
          argv: ["sh", "-c", 'i=0; while [ $i -lt "$1" ]; do echo "$0 line $i"; i=$((i+1)); done', `proc-${index}`, String(lines)],
          tty: index % 4 === 0,
        }),
      ),
    );
    const outputs = await Promise.all(
      handles.map(async (handle) => {
        const chunks: Uint8Array[] = [];
        let lastSeq = 0;
        let ordered = true;
        for await (const event of handle) {
          ordered &&= event.seq > lastSeq;
          lastSeq = event.seq;
          chunks.push(event.data);
        }
        return { text: Buffer.concat(chunks).toString("utf8"), ordered, exitCode: await handle.wait() };
      }),
    );
    outputs.forEach(({ text, ordered, exitCode }, index) => {
      const newline = index % 4 === 0 ? "\r\n" : "\n";
      const expected = Array.from({ length: lines }, (_, line) => `proc-${index} line ${line}${newline}`).join("");
      expect(text, `proc-${index}`).toBe(expected);
      expect(ordered).toBe(true);
      expect(exitCode).toBe(0);
    });
    client.close();
  });

  it("starts 400 processes with stdin at once from 20 sockets, each wired to its own stdin, stdout and stderr", async () => {
    const daemon = await startTestDaemon();
    const clients = await Promise.all(Array.from({ length: 20 }, () => connect(daemon.url)));
    const results = await Promise.all(
      clients.flatMap((client, clientIndex) =>
        Array.from({ length: 20 }, async (_, index) => {
          const name = `c${clientIndex}-p${index}`;
          const handle = await client.start({
            argv: ["sh", "-c", 'read line; echo "out $line"; echo "err $line" >&2'],
            pipeStdin: true,
          });
          await handle.write(`${name}\n`);
          let stdout = "";
          let stderr = "";
          for await (const event of handle) {
            if (event.stream === "stderr") stderr += Buffer.from(event.data).toString();
            else stdout += Buffer.from(event.data).toString();
          }
          return { name, stdout, stderr, exitCode: await handle.wait() };
        }),
      ),
    );
    for (const { name, stdout, stderr, exitCode } of results) {
      expect({ stdout, stderr, exitCode }, name).toEqual({ stdout: `out ${name}\n`, stderr: `err ${name}\n`, exitCode: 0 });
    }
    for (const client of clients) client.close();
  });
});
