/**
 * What the host has for the terminal of the `execmux serve` that launched
 * its daemon (launcher.ts): its own log lines and its front's, and the
 * front's stdout, sent over the launcher's link as if the launcher had
 * written them. While no launcher is attached (it was killed, or a new one
 * is starting) the latest log lines wait in a bounded ring and the next
 * launcher prints them first; older ones are counted, not kept.
 */
import type { Socket } from "node:net";
import { encodeFrame, FrameKind } from "./link-frames.js";

const KEPT_WHILE_ALONE = 1_000;
/** A launcher that stops reading its link does not make the host buffer output without bound. */
const MAX_UNREAD_BYTES = 4 * 1024 * 1024;

export class HostLog {
  private launcher: Socket | undefined;
  private readonly waiting: string[] = [];
  private dropped = 0;

  /** pino's destination, and the front's stderr line by line. */
  write(line: string | Buffer): void {
    if (this.launcher) return this.send(FrameKind.Log, line);
    this.waiting.push(line.toString());
    if (this.waiting.length > KEPT_WHILE_ALONE) {
      this.waiting.shift();
      this.dropped++;
    }
  }

  /** The front's stdout (its URL line: never dropped); nobody's to read while no launcher is attached. */
  stdout(bytes: Buffer): void {
    this.launcher?.write(encodeFrame(FrameKind.Stdout, bytes));
  }

  private send(kind: FrameKind, payload: string | Buffer): void {
    if (this.launcher!.writableLength < MAX_UNREAD_BYTES) this.launcher!.write(encodeFrame(kind, payload));
    else this.dropped++;
  }

  attach(launcher: Socket): void {
    this.launcher = launcher;
    if (this.dropped > 0) {
      const note = { level: 40, time: Date.now(), msg: `the process host dropped ${this.dropped} log lines that no \`execmux serve\` could take` };
      launcher.write(encodeFrame(FrameKind.Log, `${JSON.stringify(note)}\n`));
      this.dropped = 0;
    }
    for (const line of this.waiting.splice(0)) launcher.write(encodeFrame(FrameKind.Log, line));
  }

  detach(launcher: Socket): void {
    if (this.launcher === launcher) this.launcher = undefined;
  }
}
