/**
 * Large frames are decoded, parsed and checked on a worker thread, so a
 * client's 12 MB frame costs the event loop the time to hand it over and take
 * back what it holds, not the 60-120 ms of decoding its text, parsing it and
 * counting a long string's characters for a schema's maxLength (measured on
 * the 2-core VM for a 12 MB `initialize`). Its connection reads nothing more
 * meanwhile (the inbound gate holds), so its frames stay in order; others go
 * on. The worker is started by the first large frame, never at start-up, and
 * ends after a while without one; if it cannot run, frames are parsed here.
 */
import { Worker } from "node:worker_threads";
import { inPackage } from "../package-root.js";
import { checkFrame, type CheckedFrame } from "./frame-check.js";

/** Frames at least this large go to the worker; smaller ones cost less than the hand-over is worth. */
export const OFF_THREAD_FRAME_BYTES = 1024 * 1024;
/** An idle worker ends after this long (a one-shot timer, re-armed by each frame; nothing runs while idle). */
const IDLE_WORKER_MS = 30_000;

/** tsc's output of frame-parser-worker.ts, which stays beside the bundle (the daemon itself may run bundled). */
const WORKER_SCRIPT = inPackage("dist", "rpc", "frame-parser-worker.js");

export class OffThreadFrames {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (frame: CheckedFrame) => void; text: () => string }>();
  private idleTimer: NodeJS.Timeout | undefined;
  /** Set when the worker could not be started or failed: every frame is parsed here from then on. */
  private unavailable = false;

  /** The message `data` holds, its params checked. */
  parse(data: Buffer): Promise<CheckedFrame> {
    const worker = this.workerOrUndefined();
    if (!worker) return checkFrame(data.toString("utf8"));
    clearTimeout(this.idleTimer);
    const id = this.nextId++;
    return new Promise((resolve) => {
      // `data` stays here, to parse here should the worker fail before it answers; a copy of its own moves there.
      this.pending.set(id, { resolve, text: () => data.toString("utf8") });
      const bytes = new Uint8Array(data.length);
      bytes.set(data);
      worker.postMessage({ id, bytes }, [bytes.buffer]);
    });
  }

  private workerOrUndefined(): Worker | undefined {
    if (this.unavailable) return undefined;
    if (this.worker) return this.worker;
    try {
      const worker = new Worker(WORKER_SCRIPT);
      worker.unref();
      worker.on("message", ({ id, frame }: { id: number; frame: CheckedFrame }) => {
        this.pending.get(id)?.resolve(frame);
        this.pending.delete(id);
        if (this.pending.size === 0) this.armIdleTimer();
      });
      worker.on("error", () => this.worker === worker && this.failOver());
      worker.on("exit", () => this.worker === worker && this.failOver());
      this.worker = worker;
      return worker;
    } catch {
      this.unavailable = true;
      return undefined;
    }
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const worker = this.worker;
      this.worker = undefined;
      if (worker && this.pending.size === 0) void worker.terminate();
    }, IDLE_WORKER_MS);
    this.idleTimer.unref();
  }

  /** The worker died: what it had not answered is parsed here, and no worker is started again. */
  private failOver(): void {
    this.worker = undefined;
    this.unavailable = true;
    for (const [id, { resolve, text }] of this.pending) {
      this.pending.delete(id);
      void checkFrame(text()).then(resolve);
    }
  }
}
