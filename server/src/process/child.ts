/**
 * What the daemon needs from a spawned child, whether it runs on pipes or on
 * a PTY. The spawners (spawn-pipe.ts, spawn-pty.ts) implement it; everything
 * above them (managed-process.ts) is the same for both.
 */
import type { OutputStream } from "@execmux/shared";

export interface SpawnSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly arg0: string | undefined;
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly pipeStdin: boolean;
  readonly cols: number;
  readonly rows: number;
  /** The cgroup the child is born into (see process-trees.ts), or undefined. */
  readonly cgroup: string | undefined;
}

/** What one read says of the reads that follow it (see ChildEvents.output). */
export type ReadHint = "drained" | "more-waiting";

export interface ChildEvents {
  /**
   * `read`: what the read that brought `data` says of what follows it
   * (output-coalescer.ts): "drained", it emptied the pipe, so nothing more
   * of this stream can come this turn; "more-waiting", it was as large as the
   * kernel hands over at once, so the writer is ahead of the reader.
   */
  output(stream: OutputStream, data: Buffer, read?: ReadHint): void;
  /** A stream reached end of file; no more output will come from it. */
  streamEnded(stream: OutputStream): void;
  /** The direct child was reaped. `signal` is set when a signal killed it. */
  exited(code: number | null, signal: NodeJS.Signals | null): void;
}

export interface Child {
  readonly pid: number;
  /** The output streams this child will end, in the order they may end. */
  readonly streams: readonly OutputStream[];
  /** False once stdin is closed or never existed. */
  readonly stdinOpen: boolean;
  /** Input written but not yet taken by the kernel: what the daemon holds for the child. */
  readonly stdinQueuedBytes: number;
  /** Resolves once stdinQueuedBytes is at most `bytes`, or stdin is closed. */
  whenStdinBelow(bytes: number): Promise<void>;
  write(data: Buffer): void;
  closeStdin(): void;
  resize(cols: number, rows: number): void;
  /** Stops reading output so the child blocks on write (flow control). */
  pause(): void;
  resume(): void;
  /** Flow control: the most output one chunk may hold (beyond one read of the kernel's). */
  limitChunks(bytes: number): void;
}

/** Raised by a spawner when the program cannot be started at all. */
export class SpawnError extends Error {
  constructor(
    message: string,
    readonly errno: string,
    /** What failed when it was not the program itself (the working directory), for the client's message. */
    readonly subject?: string,
  ) {
    super(message);
    this.name = "SpawnError";
  }
}
