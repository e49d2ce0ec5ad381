/**
 * The stdio transport, upstream's `--listen stdio`: one JSON message per
 * line on stdin and on stdout (blank lines skipped, a last line without its
 * newline still counts). Only messages go to stdout; logs go to stderr.
 *
 * A line is held in memory until its newline arrives, so it is bounded: past
 * `maxLineBytes` the transport drops it, stops reading and reports it
 * (`onTooLarge`); the connection answers and closes. Binary messages cannot
 * travel in a line of text (`carriesBinary` is false).
 *
 * Flow control is the WebSocket's: `bufferedAmount` is what stdout has not
 * written yet, and each write's callback tells the sender to go on, so a
 * parent that stops reading pauses the processes instead of growing memory.
 */
import { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";
import type { MessageTransport, OutgoingMessage } from "../rpc/transport.js";

/**
 * How long the end of the session may wait for a parent that closed stdin to
 * read the last replies. A parent that no longer reads stdout cannot keep the
 * daemon (and its processes) alive past this.
 */
const FINAL_FLUSH_LIMIT_MS = 5_000;

const NEWLINE = 0x0a;
const LINE_END = Buffer.of(NEWLINE);

/** True for a line of nothing but spaces, tabs and carriage returns: skipped, as upstream skips them. */
function isBlank(line: Buffer): boolean {
  for (const byte of line) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== 0x0b && byte !== 0x0c) return false;
  return true;
}

export class StdioTransport implements MessageTransport {
  readonly carriesBinary = false;
  private readonly events = new EventEmitter();
  /** The current line's bytes so far (its newline has not arrived). */
  private pieces: Buffer[] = [];
  private pieceBytes = 0;
  /** No more input is taken: it ended, was too large, or the transport closed. */
  private reading = true;
  private open = true;
  private closed = false;
  private finalFlushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly maxLineBytes: number,
  ) {
    // Errors are reported to listeners, never thrown out of the emitter.
    this.events.on("error", () => undefined);
    input.on("data", (chunk: Buffer) => this.onData(chunk));
    input.on("end", () => this.onEnd());
    input.on("error", (error: Error) => {
      this.events.emit("error", error);
      this.finish();
    });
    // EPIPE: whoever read stdout is gone, so nothing more can be said.
    output.on("error", (error: Error) => {
      this.events.emit("error", error);
      this.finish();
    });
  }

  get isOpen(): boolean {
    return this.open;
  }

  get bufferedAmount(): number {
    return this.output.writableLength;
  }

  send(message: OutgoingMessage, sent: (error?: Error) => void): void {
    if (Buffer.isBuffer(message)) throw new TypeError("binary messages cannot travel on stdio");
    if (!this.open) {
      sent(new Error("the stdio transport is closed"));
      return;
    }
    const done = (error?: Error | null) => sent(error ?? undefined);
    // One write per message (or two corked into one): a line is never split by another message's bytes.
    if (typeof message === "string") {
      this.output.write(`${message}\n`, done);
      return;
    }
    this.output.cork();
    this.output.write(message.bytes);
    this.output.write(LINE_END, done);
    this.output.uncork();
  }

  /** Stops reading, lets stdout write out what it holds (within a bound), then reports the close. */
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.stopReading();
    this.armFinalFlushLimit();
    this.output.end(() => this.finish());
  }

  /** The lines of a chunk already read are still delivered; the gate holds them. */
  pause(): void {
    if (this.reading) this.input.pause();
  }

  resume(): void {
    if (this.reading) this.input.resume();
  }

  onMessage(listener: (data: Buffer) => void): void {
    this.events.on("message", listener);
  }

  onTooLarge(listener: (limitBytes: number) => void): void {
    this.events.on("tooLarge", listener);
  }

  onInputEnd(listener: () => void): void {
    this.events.on("inputEnd", listener);
  }

  onClose(listener: () => void): void {
    this.events.on("close", listener);
  }

  onError(listener: (error: Error) => void): void {
    this.events.on("error", listener);
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    while (this.reading) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline === -1) break;
      const tail = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.pieceBytes + tail.length > this.maxLineBytes) return this.tooLarge();
      const line = this.pieces.length === 0 ? tail : Buffer.concat([...this.pieces, tail]);
      this.pieces = [];
      this.pieceBytes = 0;
      this.deliver(line);
    }
    if (!this.reading || start === chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.pieceBytes + rest.length > this.maxLineBytes) return this.tooLarge();
    this.pieces.push(rest);
    this.pieceBytes += rest.length;
  }

  private deliver(line: Buffer): void {
    if (!isBlank(line)) this.events.emit("message", line);
  }

  private onEnd(): void {
    if (!this.reading) return;
    // A last line without its newline is still a message (upstream reads it too).
    if (this.pieceBytes > 0) this.deliver(Buffer.concat(this.pieces));
    this.stopReading();
    this.armFinalFlushLimit();
    this.events.emit("inputEnd");
  }

  private tooLarge(): void {
    this.stopReading();
    this.events.emit("tooLarge", this.maxLineBytes);
  }

  private stopReading(): void {
    this.reading = false;
    this.pieces = [];
    this.pieceBytes = 0;
    this.input.pause();
  }

  private armFinalFlushLimit(): void {
    this.finalFlushTimer ??= setTimeout(() => this.finish(), FINAL_FLUSH_LIMIT_MS);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.open = false;
    this.reading = false;
    clearTimeout(this.finalFlushTimer);
    this.events.emit("close");
  }
}
