/**
 * A started process as the application sees it: its output in seq order,
 * each chunk exactly once, then its exit code. Notifications with a seq the
 * handle already delivered are dropped, so replays after a resume are safe.
 */
import type { GapNotification, OutputStream, ParamsOf, ProcessOrigin, RequestMethod, ResultOf, SandboxType, SignalName, WriteStatus } from "@execmux/shared";
import { encodeBase64, toBytes } from "./base64.js";
import { Emitter } from "./emitter.js";
import { ExecmuxError } from "./errors.js";

/** What a handle needs of the client that made it (client.ts implements it): handles never import the client. */
export interface ProcessHandleOwner {
  request<M extends RequestMethod>(method: M, params: ParamsOf<M>, timeoutMs?: number): Promise<ResultOf<M>>;
  newWriteId(): string;
  ackOutput(handle: ProcessHandle, bytes: number): void;
}

export interface OutputEvent {
  readonly seq: number;
  readonly stream: OutputStream;
  readonly data: Uint8Array;
}

/** Output kept for a handle nobody listens to yet; the oldest goes first past this. */
const BACKLOG_LIMIT_BYTES = 16 * 1024 * 1024;

type HandleEvents = {
  output: [OutputEvent];
  gap: [GapNotification];
  exit: [number];
  close: [];
};

export class ProcessHandle {
  private readonly events = new Emitter<HandleEvents>();
  /** Highest seq delivered to the application. */
  private delivered = 0;
  private exitCodeValue: number | null = null;
  private isClosed = false;
  private failure: Error | undefined;
  private readonly closeWaiters: { resolve(code: number): void; reject(error: Error): void }[] = [];
  private listening = 0;
  /** @internal The daemon confirmed the start. */
  started = false;
  /** What confines the process ("none" without a sandbox), once started. */
  sandboxType: SandboxType = "none";
  /** Observers: how the process was started (argv, when), as the daemon announced it. */
  origin: ProcessOrigin | undefined;
  private readonly backlog: OutputEvent[] = [];
  private backlogBytes = 0;

  constructor(
    readonly processId: string,
    readonly tty: boolean,
    private readonly client: ProcessHandleOwner,
  ) {}

  /** The last seq the application has seen: the cursor to resume from. */
  get lastSeq(): number {
    return this.delivered;
  }
  get exitCode(): number | null {
    return this.exitCodeValue;
  }
  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Output that arrived before anyone listened is kept (up to
   * BACKLOG_LIMIT_BYTES) and handed to the first listener, so
   * `start()` followed by `for await` never misses the beginning.
   */
  onOutput(listener: (event: OutputEvent) => void): () => void {
    const off = this.events.on("output", listener);
    this.listening++;
    for (const event of this.backlog.splice(0)) listener(event);
    this.backlogBytes = 0;
    return () => {
      off();
      this.listening--;
    };
  }
  /**
   * Output as text: each stream is decoded as UTF-8 on its own, with a
   * streaming decoder, so a character split across chunks (or across a
   * reconnect) comes out whole. The bytes stay available through onOutput.
   */
  onText(listener: (text: string, stream: OutputStream) => void): () => void {
    const decoders = new Map<OutputStream, TextDecoder>();
    const offOutput = this.onOutput((event) => {
      let decoder = decoders.get(event.stream);
      if (!decoder) decoders.set(event.stream, (decoder = new TextDecoder("utf-8")));
      const text = decoder.decode(event.data, { stream: true });
      if (text) listener(text, event.stream);
    });
    const offClose = this.onClose(() => {
      for (const [stream, decoder] of decoders) {
        const rest = decoder.decode();
        if (rest) listener(rest, stream);
      }
    });
    return () => {
      offOutput();
      offClose();
    };
  }

  /** Output of this process was evicted while the client was disconnected. */
  onGap(listener: (gap: GapNotification) => void): () => void {
    return this.events.on("gap", listener);
  }
  /**
   * A listener added after the exit still hears of it (on a microtask): a
   * quick process's exit often arrives in the same read as the reply to its
   * start, before the code after `await start()` runs.
   */
  onExit(listener: (exitCode: number) => void): () => void {
    const code = this.exitCodeValue;
    return code === null ? this.events.on("exit", listener) : this.late(() => listener(code));
  }
  /** Like onExit: a listener added after the close is called once, on a microtask. */
  onClose(listener: () => void): () => void {
    return this.isClosed || this.failure ? this.late(listener) : this.events.on("close", listener);
  }

  /** Resolves with the exit code once the process has closed (all output delivered). */
  wait(): Promise<number> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.isClosed) return Promise.resolve(this.exitCodeValue ?? -1);
    return new Promise((resolve, reject) => this.closeWaiters.push({ resolve, reject }));
  }

  /** Every output chunk, in order, until the process closes. */
  async *[Symbol.asyncIterator](): AsyncGenerator<OutputEvent> {
    const queue: OutputEvent[] = [];
    let wake: (() => void) | undefined;
    const offOutput = this.onOutput((event) => {
      queue.push(event);
      wake?.();
    });
    const offClose = this.onClose(() => wake?.());
    try {
      for (;;) {
        const next = queue.shift();
        if (next) {
          yield next;
          continue;
        }
        if (this.isClosed || this.failure) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      offOutput();
      offClose();
    }
  }

  /** Every write carries a writeId, so one cut off by a disconnect is safely sent again. */
  write(data: string | Uint8Array, options: { writeId?: string } = {}): Promise<WriteStatus> {
    return this.client
      .request("process/write", {
        processId: this.processId,
        chunk: encodeBase64(toBytes(data)),
        writeId: options.writeId ?? this.client.newWriteId(),
      })
      .then((result) => result.status);
  }

  /**
   * With `manualAcks`: the application has consumed (rendered) `bytes` of
   * this process's output, so the daemon may send that much more.
   */
  ack(bytes: number): void {
    this.client.ackOutput(this, bytes);
  }

  closeStdin(): Promise<WriteStatus> {
    return this.client.request("process/closeStdin", { processId: this.processId }).then((result) => result.status);
  }

  resize(cols: number, rows: number): Promise<void> {
    return this.client.request("process/resize", { processId: this.processId, cols, rows }).then(() => undefined);
  }

  signal(signal: SignalName | "interrupt" | "terminate" | "kill" | "hangup" | "quit"): Promise<void> {
    return this.client.request("process/signal", { processId: this.processId, signal }).then(() => undefined);
  }

  /** SIGTERM to the whole process tree, SIGKILL after the daemon's grace. False if it had already exited. */
  terminate(): Promise<boolean> {
    return this.client.request("process/terminate", { processId: this.processId }).then((result) => result.running);
  }

  // ---- called by the client as notifications arrive

  /** @internal False for a seq already delivered (a replay), which is dropped. */
  deliverOutput(seq: number, stream: OutputStream, data: Uint8Array): boolean {
    if (!this.accept(seq)) return false;
    const event = { seq, stream, data };
    if (this.listening > 0) {
      this.events.emit("output", event);
      return true;
    }
    this.backlog.push(event);
    this.backlogBytes += data.length;
    while (this.backlogBytes > BACKLOG_LIMIT_BYTES && this.backlog.length > 1) {
      this.backlogBytes -= this.backlog.shift()!.data.length;
    }
    return true;
  }

  /** @internal */
  deliverGap(gap: GapNotification): void {
    // The cursor does not jump past the gap: the exit event may sit inside
    // its seq range (it is never evicted) and still has to be delivered.
    if (gap.toSeq <= this.delivered) return;
    this.events.emit("gap", gap);
  }

  /** @internal */
  deliverExit(seq: number, exitCode: number): void {
    if (!this.accept(seq)) return;
    this.exitCodeValue = exitCode;
    this.events.emit("exit", exitCode);
  }

  /** @internal */
  deliverClose(seq: number): void {
    if (!this.accept(seq)) return;
    this.isClosed = true;
    this.events.emit("close");
    for (const waiter of this.closeWaiters.splice(0)) waiter.resolve(this.exitCodeValue ?? -1);
  }

  /** @internal The process can no longer be followed (session lost). */
  fail(error: ExecmuxError): void {
    if (this.isClosed || this.failure) return;
    this.failure = error;
    this.events.emit("close");
    for (const waiter of this.closeWaiters.splice(0)) waiter.reject(error);
  }

  private late(listener: () => void): () => void {
    let removed = false;
    queueMicrotask(() => removed || listener());
    return () => {
      removed = true;
    };
  }

  private accept(seq: number): boolean {
    if (seq <= this.delivered) return false;
    this.delivered = seq;
    return true;
  }
}
