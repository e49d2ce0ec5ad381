/** Wiring a remote process to this terminal: output out, input in, size and raw mode for PTYs. */
import { execFileSync } from "node:child_process";
import type { ExecmuxClient, ProcessHandle } from "@execmux/client";
import { SignalNumbers } from "@execmux/shared";

/** How a shell reports a pipeline member killed by SIGPIPE. */
export const SIGPIPE_EXIT_CODE = 128 + SignalNumbers.SIGPIPE;

const CTRL_C = 0x03;
/** Ctrl-], telnet's and docker's escape. */
const DETACH_KEY = 0x1d;

export interface InputOptions {
  /** Put the terminal in raw mode (a remote PTY does the line editing). */
  raw: boolean;
  /** Ctrl-] (from a terminal) detaches instead of being sent. */
  onDetach?: () => void;
  /** While this is false a raw Ctrl-C cannot reach the remote PTY, so it ends the command here. */
  connected?: () => boolean;
}

/** Sends local stdin to the process; EOF closes its stdin. */
export function forwardInput(handle: ProcessHandle, options: InputOptions): void {
  const stdin = process.stdin;
  const raw = options.raw && stdin.isTTY;
  if (raw) stdin.setRawMode(true);
  else if (options.onDetach) detachOnKeyInCookedMode(options.onDetach);
  stdin.on("data", (data: Buffer) => {
    if (raw && options.onDetach && data.includes(DETACH_KEY)) {
      options.onDetach();
      return;
    }
    if (raw && options.connected && !options.connected() && data.includes(CTRL_C)) exitUnreachable("SIGINT");
    void handle.write(data).catch(() => undefined);
  });
  stdin.on("end", () => void handle.closeStdin().catch(() => undefined));
}

/**
 * Ctrl-] for a terminal in cooked mode (a pipe process: the kernel's line
 * editing and echo stay, so no raw mode). The terminal's QUIT character
 * becomes Ctrl-], so the key sends SIGQUIT at once instead of waiting in the
 * line buffer; the settings are put back on exit.
 */
function detachOnKeyInCookedMode(onDetach: () => void): void {
  if (!process.stdin.isTTY) return;
  const stty = (...args: string[]) => execFileSync("stty", args, { stdio: ["inherit", "pipe", "pipe"], encoding: "utf8" }).trim();
  let saved: string;
  try {
    saved = stty("-g");
    stty("quit", "^]");
  } catch {
    return; // no stty: Ctrl-C still ends the command
  }
  process.on("exit", () => {
    try {
      stty(saved);
    } catch {
      // the terminal is gone
    }
  });
  process.on("SIGQUIT", onDetach);
}

/**
 * Ends the command after `signal` when the daemon cannot be told: a local
 * Ctrl-C or SIGTERM must always work. The remote process keeps running.
 */
export function exitUnreachable(signal: "SIGINT" | "SIGTERM" | "SIGHUP"): never {
  process.stderr.write(`\r\nexecmux: ${signal} while the daemon is unreachable; exiting (the remote process keeps running until its session expires)\r\n`);
  return exitWith(128 + SignalNumbers[signal]);
}

/**
 * Ctrl-C, SIGTERM and SIGHUP go to the remote process, as if it were local.
 * While the daemon is unreachable, or a signal sent before is still on its
 * way, they end this command at once instead.
 */
export function forwardSignals(client: ExecmuxClient, handle: ProcessHandle): void {
  let inFlight = false;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (!client.connected || inFlight) exitUnreachable(signal);
      inFlight = true;
      const sent = () => (inFlight = false);
      handle.signal(signal).then(sent, () => (client.connected ? sent() : exitUnreachable(signal)));
    });
  }
}

/** Keeps the remote PTY's size equal to this terminal's. */
export function followWindowSize(handle: ProcessHandle): void {
  if (!process.stdout.isTTY) return;
  process.on("SIGWINCH", () => {
    void handle.resize(process.stdout.columns, process.stdout.rows).catch(() => undefined);
  });
}

/**
 * Writes output to the local stdout or stderr, by stream, and acknowledges
 * it (the client connects with manualAcks) only once written: a slow reader
 * of our stdout slows the remote process down instead of filling our memory.
 * When the reader is gone (EPIPE: `execmux exec ... | head`), `onBrokenPipe`.
 */
export function printOutput(handle: ProcessHandle, onBrokenPipe: () => void): void {
  let broken = false;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
      if (broken) return;
      broken = true;
      onBrokenPipe();
    });
  }
  handle.onOutput((event) => {
    if (broken) return;
    const stream = event.stream === "stderr" ? process.stderr : process.stdout;
    stream.write(event.data, (error) => {
      if (!error) handle.ack(event.data.length);
    });
  });
  handle.onGap((gap) =>
    process.stderr.write(`\r\n[execmux: ${gap.bytes}${gap.bytesExact ? "" : "+"} bytes of earlier output were evicted before they could be shown]\r\n`),
  );
}

/** Leaves the terminal as it was, flushes stdout, and exits with `code`. */
export function exitWith(code: number): never {
  if (process.stdin.isTTY && process.stdin.isRaw) process.stdin.setRawMode(false);
  if (process.stdout.destroyed) process.exit(code);
  process.stdout.write("", () => process.exit(code));
  // If stdout never drains, exit anyway.
  setTimeout(() => process.exit(code), 2000).unref();
  return undefined as never;
}
