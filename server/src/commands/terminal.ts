/** Wiring a remote process to this terminal: output out, input in, size and raw mode for PTYs. */
import { RpcRequestError, type ProcessHandle } from "@execmux/client";
import { ErrorCode, SignalNumbers } from "@execmux/shared";

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

/**
 * Sends local stdin to the process; EOF closes its stdin. In raw mode,
 * Ctrl-] detaches. One write at a time: local stdin is paused until the
 * daemon took the last one, so a process that reads slowly slows the
 * sender down instead of losing input.
 */
export function forwardInput(handle: ProcessHandle, options: { raw: boolean; onDetach?: () => void }): void {
  const stdin = process.stdin;
  if (options.raw && stdin.isTTY) stdin.setRawMode(true);
  let writing: Promise<void> = Promise.resolve();
  stdin.on("data", (data: Buffer) => {
    if (options.raw && options.onDetach && data.includes(0x1d)) {
      options.onDetach();
      return;
    }
    stdin.pause();
    writing = writeWhenRoom(handle, data)
      .catch(() => undefined)
      .finally(() => stdin.resume());
  });
  stdin.on("end", () => void writing.then(() => handle.closeStdin()).catch(() => undefined));
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
