/** Wiring a remote process to this terminal: output out, input in, size and raw mode for PTYs. */
import { execFileSync } from "node:child_process";
import { RpcRequestError, type ExecmuxClient, type ProcessHandle } from "@execmux/client";
import { ErrorCode, SignalNumbers } from "@execmux/shared/core";

/** How a shell reports a pipeline member killed by SIGPIPE. */
export const SIGPIPE_EXIT_CODE = 128 + SignalNumbers.SIGPIPE;

/** Longest pause between retries of a write the daemon had no room for. */
const MAX_RETRY_MS = 1_000;

/**
 * Writes `data`, waiting while the daemon refuses it because the process has
 * not read its earlier input (maxStdinBufferBytes): the retry keeps its
 * writeId, so it is written once.
 */
async function writeWhenRoom(handle: ProcessHandle, data: Buffer): Promise<void> {
  const writeId = `stdin-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  for (let delayMs = 10; ; delayMs = Math.min(MAX_RETRY_MS, delayMs * 2)) {
    try {
      await handle.write(data, { writeId });
      return;
    } catch (error) {
      const full = error instanceof RpcRequestError && error.code === ErrorCode.LimitExceeded &&
        (error.data as { limit?: string } | undefined)?.limit === "maxStdinBufferBytes";
      if (!full) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/** Input read locally but not yet taken by the daemon, past which reading pauses. */
const MAX_QUEUED_INPUT_BYTES = 1024 * 1024;

const CTRL_C = 0x03;
/** Ctrl-], telnet's and docker's escape. */
const DETACH_KEY = 0x1d;
/**
 * How long a forwarded Ctrl-C or signal may go unanswered before the next
 * one ends the command instead: longer than a round trip to a distant
 * daemon (so a quick double Ctrl-C still reaches the remote program),
 * shorter than a person's patience with a half-open connection.
 */
const UNANSWERED_MS = 1_000;

/** Whether a forwarded interrupt has been waiting for its answer longer than UNANSWERED_MS. */
function interruptTracker() {
  let waitingSince: number | undefined;
  return {
    sent(answered: Promise<unknown>): void {
      waitingSince ??= Date.now();
      void answered.finally(() => (waitingSince = undefined));
    },
    stuck: () => waitingSince !== undefined && Date.now() - waitingSince > UNANSWERED_MS,
  };
}

export interface InputOptions {
  /** Put the terminal in raw mode (a remote PTY does the line editing). */
  raw: boolean;
  /** Ctrl-] (from a terminal) detaches instead of being sent. */
  onDetach?: () => void;
  /**
   * While this is false a raw Ctrl-C cannot reach the remote PTY, so it ends
   * the command here; so does one typed while an earlier one is stuck.
   */
  connected?: () => boolean;
}

/** Sends local stdin to the process; EOF closes its stdin. */
export function forwardInput(handle: ProcessHandle, options: InputOptions): void {
  const stdin = process.stdin;
  const raw = options.raw && stdin.isTTY;
  if (raw) stdin.setRawMode(true);
  else if (options.onDetach) detachOnKeyInCookedMode();
  const interrupts = interruptTracker();
  // Writes go one after another (a refused one is retried first); local
  // input is read on, so a Ctrl-C is seen even while a write waits, unless
  // a paste has piled up more than this.
  let writing: Promise<unknown> = Promise.resolve();
  let queuedBytes = 0;
  stdin.on("data", (data: Buffer) => {
    // Anything typed in the same read before the key is not sent: in cooked mode, the unfinished line.
    if (options.onDetach && stdin.isTTY && data.includes(DETACH_KEY)) {
      options.onDetach();
      return;
    }
    const interrupt = raw && options.connected !== undefined && data.includes(CTRL_C);
    if (interrupt && (interrupts.stuck() || !options.connected!())) {
      exitUnreachable("SIGINT");
      return;
    }
    queuedBytes += data.length;
    if (queuedBytes > MAX_QUEUED_INPUT_BYTES) stdin.pause();
    const written = writing.then(() => writeWhenRoom(handle, data)).catch(() => undefined);
    writing = written.finally(() => {
      queuedBytes -= data.length;
      if (queuedBytes <= MAX_QUEUED_INPUT_BYTES) stdin.resume();
    });
    if (interrupt) interrupts.sent(written);
  });
  stdin.on("end", () => void writing.then(() => handle.closeStdin()).catch(() => undefined));
}

/**
 * Ctrl-] for a terminal in cooked mode (a pipe process: the kernel's line
 * editing and echo stay, so no raw mode). Ctrl-] becomes an end-of-line
 * character (EOL), so the key hands over the line at once, with the key at
 * its end, instead of waiting in the line buffer. Not a signal: the QUIT
 * character would send SIGQUIT to the whole foreground process group, and
 * a wrapper in it (npx, a shell running the command) would die of it. The
 * settings are put back on exit.
 */
function detachOnKeyInCookedMode(): void {
  if (!process.stdin.isTTY) return;
  const stty = (...args: string[]) => execFileSync("stty", args, { stdio: ["inherit", "pipe", "pipe"], encoding: "utf8" }).trim();
  let saved: string;
  try {
    saved = stty("-g");
    stty("eol", "^]");
  } catch {
    return; // no stty: Ctrl-] then ends a line with Enter; Ctrl-C still ends the command
  }
  process.on("exit", () => {
    try {
      stty(saved);
    } catch {
      // the terminal is gone
    }
  });
  // Ending by a signal's default action would skip the "exit" handler and leave EOL on Ctrl-] (Ctrl-\ included).
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const) process.on(signal, () => exitWith(128 + SignalNumbers[signal]));
}

/**
 * Ends the command after `signal` when the daemon cannot be told: a local
 * Ctrl-C or SIGTERM must always work. The remote process keeps running.
 * (The exit comes once stdout has drained, so callers return.)
 */
function exitUnreachable(signal: "SIGINT" | "SIGTERM" | "SIGHUP"): void {
  process.stderr.write(`\r\nexecmux: ${signal} while the daemon is unreachable; exiting (the remote process keeps running until its session expires)\r\n`);
  exitWith(128 + SignalNumbers[signal]);
}

/**
 * Ctrl-C, SIGTERM and SIGHUP go to the remote process, as if it were local.
 * While the daemon is unreachable, or one sent before is stuck on its way,
 * they end this command at once instead.
 */
export function forwardSignals(client: ExecmuxClient, handle: ProcessHandle): void {
  const signals = interruptTracker();
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (!client.connected || signals.stuck()) {
        exitUnreachable(signal);
        return;
      }
      const delivered = handle.signal(signal).catch(() => {
        if (!client.connected) exitUnreachable(signal);
      });
      signals.sent(delivered);
    });
  }
}

/**
 * This terminal's size, when it has one: a terminal that reports 0 columns
 * (`script` or an ssh session run without a size) leaves the remote PTY at
 * the daemon's default instead of asking for a size the daemon refuses.
 */
export function terminalSize(): { cols: number; rows: number } | undefined {
  const { isTTY, columns, rows } = process.stdout;
  return isTTY && columns >= 1 && rows >= 1 ? { cols: columns, rows } : undefined;
}

/** Sets the remote PTY's size to this terminal's, if it has one. */
export function matchWindowSize(handle: ProcessHandle): void {
  const size = terminalSize();
  if (size) void handle.resize(size.cols, size.rows).catch(() => undefined);
}

/** Keeps the remote PTY's size equal to this terminal's. */
export function followWindowSize(handle: ProcessHandle): void {
  if (!process.stdout.isTTY) return;
  process.on("SIGWINCH", () => matchWindowSize(handle));
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
