/**
 * `execmux attach --session ID PROCESS`: replays what the process printed
 * (as far as it is retained), then follows it live with stdin forwarded,
 * until it ends (exit with its code) or Ctrl-] detaches (from a terminal,
 * whether the process runs on a PTY or on pipes).
 */
import { CommandError, UsageError } from "./command-error.js";
import { clientNameOf, connectWith, parseClientArgs } from "./client-args.js";
import { SIGPIPE_EXIT_CODE, exitWith, followWindowSize, forwardInput, matchWindowSize, printOutput } from "./terminal.js";

export async function attachCommand(argv: string[]): Promise<void> {
  const args = parseClientArgs(argv, process.env, {});
  const processId = args.rest[0];
  if (!args.session || !processId) throw new UsageError("usage: execmux attach --session ID PROCESS");
  const client = await connectWith(args, {
    resume: { sessionId: args.session, processes: [processId] },
    manualAcks: true,
    clientName: clientNameOf("attach"),
  });
  const info = (await client.list()).find((process) => process.processId === processId);
  const handle = client.handle(processId);
  if (!info || !handle) {
    client.close();
    throw new CommandError(`session ${args.session} has no process ${processId}`, 1);
  }
  // Keys first: the detach key works from the moment the replay appears.
  forwardInput(handle, {
    raw: info.tty,
    onDetach: () => {
      client.close();
      process.stderr.write("\r\n[execmux: detached]\r\n");
      exitWith(0);
    },
    connected: () => client.connected,
  });
  // Our reader went away: detach, and leave the process to whoever attaches next.
  printOutput(handle, () => exitWith(SIGPIPE_EXIT_CODE));
  if (info.tty) {
    followWindowSize(handle);
    matchWindowSize(handle);
  }
  const code = await handle.wait().catch((error: unknown) => {
    // Taken over by another client, or the session is gone: say so in the terminal's own terms.
    process.stderr.write(`\r\n[execmux: ${error instanceof Error ? error.message : String(error)}]\r\n`);
    return 1;
  });
  client.close();
  exitWith(code);
}
