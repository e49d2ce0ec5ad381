/**
 * Where the host's log lines go: to the front's stderr over the control
 * link, as if the front had logged them. While no front is attached (it was
 * killed, or is restarting) the latest lines wait in a bounded ring and the
 * next front prints them first; older ones are counted, not kept.
 */
import type { Socket } from "node:net";
import { encodeFrame, FrameKind } from "./link-frames.js";

const KEPT_WHILE_ALONE = 1_000;
/** A front that stops reading its control link does not make the host buffer logs without bound. */
const MAX_UNREAD_BYTES = 4 * 1024 * 1024;

export class HostLog {
  private front: Socket | undefined;
  private readonly waiting: string[] = [];
  private dropped = 0;

  /** pino's destination. */
  write(line: string): void {
    if (this.front) {
      if (this.front.writableLength < MAX_UNREAD_BYTES) this.front.write(encodeFrame(FrameKind.Log, line));
      else this.dropped++;
      return;
    }
    this.waiting.push(line);
    if (this.waiting.length > KEPT_WHILE_ALONE) {
      this.waiting.shift();
      this.dropped++;
    }
  }

  attach(front: Socket): void {
    this.front = front;
    if (this.dropped > 0) {
      const note = { level: 40, time: Date.now(), msg: `the process host dropped ${this.dropped} log lines while no daemon read them` };
      front.write(encodeFrame(FrameKind.Log, `${JSON.stringify(note)}\n`));
      this.dropped = 0;
    }
    for (const line of this.waiting.splice(0)) front.write(encodeFrame(FrameKind.Log, line));
  }

  detach(front: Socket): void {
    if (this.front === front) this.front = undefined;
  }
}
