/**
 * `execmux ps [--session ID]`: the sessions this identity may see, each with
 * its processes' commands and states; with --session, that session's
 * processes as a table. It never opens a session (session/list on a socket
 * of its own), so it works while another client holds the session.
 */
import { listSessions, type SessionProcess, type SessionSummary } from "@execmux/client";
import { CommandError } from "./command-error.js";
import { parseClientArgs } from "./client-args.js";

export async function psCommand(argv: string[]): Promise<void> {
  const args = parseClientArgs(argv, process.env, {});
  const sessions = await listSessions(args.url, { ...(args.token ? { token: args.token } : {}), ...(args.session ? { sessionId: args.session } : {}) });
  if (args.session) {
    const session = sessions[0];
    if (!session) throw new CommandError(`no session ${args.session} on ${args.url} (it ended, or expired without a connection)`, 1);
    write(processTable(session.processes, ""));
    return;
  }
  if (sessions.length === 0) {
    process.stderr.write(`execmux ps: no sessions of yours on ${args.url}\n`);
    return;
  }
  const now = Date.now();
  for (const [index, session] of sessions.entries()) {
    if (index > 0) write("\n");
    write(`session ${session.sessionId}  ${describeSession(session, now)}\n`);
    write(session.processes.length > 0 ? processTable(session.processes, "  ") : "  (no processes)\n");
  }
}

const write = (text: string) => process.stdout.write(text);

/** Attached or not, how long it is kept, who holds it. */
export function describeSession(session: SessionSummary, now: number): string {
  const parts: string[] = [];
  if (session.attached) parts.push(`attached by "${session.clientName}"`);
  else if (session.expiresAt !== null) parts.push(`detached, ends in ${duration(session.expiresAt - now)}`);
  else parts.push("detached, kept while its processes run");
  if (session.observers > 0) parts.push(`${session.observers} observing`);
  if (!session.own) parts.push("another identity's");
  return parts.join(", ");
}

function processTable(processes: readonly SessionProcess[], indent: string): string {
  const rows = processes.map((entry) => [
    entry.processId,
    entry.state,
    String(entry.pid ?? "-"),
    entry.exitCode === null ? "-" : String(entry.exitCode),
    entry.signal ?? "-",
    entry.tty ? "yes" : "no",
    String(entry.nextSeq),
    entry.startedAt > 0 ? localTime(entry.startedAt) : "-",
    commandLine(entry),
  ]);
  const header = ["PROCESS", "STATE", "PID", "EXIT", "SIGNAL", "TTY", "NEXT SEQ", "STARTED", "COMMAND"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  return [header, ...rows].map((row) => `${indent}${row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()}\n`).join("");
}

/** The argv as a shell would read it back; "..." where the daemon cut it. */
function commandLine(entry: SessionProcess): string {
  const quoted = entry.argv.map((argument) => (/^[\w@%+=:,./-]+$/.test(argument) ? argument : `'${argument.replace(/'/g, `'\\''`)}'`));
  // One line per process: a newline in an argument would break the table.
  return `${quoted.join(" ")}${entry.argvTruncated ? " ..." : ""}`.replace(/\n/g, "\\n");
}

function localTime(ms: number): string {
  const date = new Date(ms);
  const two = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}
