/** `execmux ps --session ID`: the processes of a session, one line each. */
import { UsageError } from "./command-error.js";
import { clientNameOf, connectWith, parseClientArgs } from "./client-args.js";

export async function psCommand(argv: string[]): Promise<void> {
  const args = parseClientArgs(argv, process.env, {});
  if (!args.session) throw new UsageError("execmux ps needs --session ID (or EXECMUX_SESSION); `execmux exec --detach` prints one");
  const client = await connectWith(args, { reconnect: false, clientName: clientNameOf("ps") });
  const rows = (await client.list()).map((process) => [
    process.processId,
    process.state,
    String(process.pid ?? "-"),
    process.exitCode === null ? "-" : String(process.exitCode),
    process.signal ?? "-",
    process.tty ? "yes" : "no",
    String(process.nextSeq),
  ]);
  const header = ["PROCESS", "STATE", "PID", "EXIT", "SIGNAL", "TTY", "NEXT SEQ"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  for (const row of [header, ...rows]) process.stdout.write(`${row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()}\n`);
  client.close();
}
