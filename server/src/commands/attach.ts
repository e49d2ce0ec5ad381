/**
 * `execmux attach --session ID PROCESS`: replays what the process printed
 * (as far as it is retained), then follows it live with stdin forwarded,
 * until it ends (exit with its code) or Ctrl-] detaches (in a terminal).
 */
import { ConfigError } from "../config.js";
import { connectWith, parseClientArgs } from "./client-args.js";
import { SIGPIPE_EXIT_CODE, exitWith, followWindowSize, forwardInput, printOutput } from "./terminal.js";

export async function attachCommand(argv: string[]): Promise<void> {
  const args = parseClientArgs(argv, process.env, {});
  const processId = args.rest[0];
  if (!args.session || !processId) throw new ConfigError("usage: execmux attach --session ID PROCESS");
  const client = await connectWith(args, { resume: { sessionId: args.session, processes: [processId] }, manualAcks: true });
  const info = (await client.list()).find((process) => process.processId === processId);
  const handle = client.handle(processId);
  if (!info || !handle) {
    client.close();
    throw new ConfigError(`session ${args.session} has no process ${processId}`);
  }
  // Our reader went away: detach, and leave the process to whoever attaches next.
  printOutput(handle, () => exitWith(SIGPIPE_EXIT_CODE));
  forwardInput(handle, {
    raw: info.tty,
    onDetach: () => {
      client.close();
      process.stderr.write("\r\n[execmux: detached]\r\n");
      exitWith(0);
    },
  });
  if (info.tty) {
    followWindowSize(handle);
    if (process.stdout.isTTY) void handle.resize(process.stdout.columns, process.stdout.rows).catch(() => undefined);
  }
  const code = await handle.wait();
  client.close();
  exitWith(code);
}
