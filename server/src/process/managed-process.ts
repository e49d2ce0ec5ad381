/**
 * One process of a session as the protocol sees it. The process itself, its
 * output, seq counter and exit live in the process host (process-host.ts),
 * which numbers everything as upstream's local backend does (one counter
 * for output, exit and close; close last); this is the daemon's view of it:
 * what it has heard so far, flow control, idempotent writes, long-poll
 * waiters, and the events held back until the start's reply is out.
 */
import type { OutputGap, OutputStream, ProcessInfo, WriteStatus } from "@execmux/shared";
import type { ProcessHost, ProcessEvents, ReadResult } from "../host/process-host.js";

export type ProcessEvent =
  | { readonly kind: "output"; readonly seq: number; readonly stream: OutputStream; readonly data: Buffer; readonly frame?: Buffer }
  | { readonly kind: "exited"; readonly seq: number; readonly exitCode: number }
  | { readonly kind: "closed"; readonly seq: number };

/**
 * A write's outcome: upstream's statuses, or "stdinFull" (the handler makes
 * it a -32011 error): the write is larger than maxStdinBufferBytes, or
 * another write of this process is already waiting for room. A refused
 * write wrote nothing and is not remembered under its writeId, so a retry
 * with the same id writes it.
 */
export type WriteOutcome = WriteStatus | "stdinFull";

/** How many writeIds a process remembers for idempotent retries. */
const REMEMBERED_WRITE_IDS = 1024;

export interface ProcessOptions {
  readonly host: ProcessHost;
  /** Input held for the child that it has not read yet; a write past it is refused. */
  readonly maxStdinBufferBytes: number;
  readonly sandboxed: boolean;
}

export class ManagedProcess {
  private handle: number | undefined;
  private processPid: number | undefined;
  private seqCounter = 1;
  /** Output bytes heard of it (or retained when a new daemon found it): the most a read of it can return. */
  private heardBytes = 0;
  private exit: { code: number; signal: NodeJS.Signals | null; seq: number } | undefined;
  private closedSeq: number | undefined;
  private denied = false;
  private readonly waiters = new Set<() => void>();
  private readonly writeIds = new Map<string, WriteStatus>();
  private readonly pendingWrites = new Map<string, Promise<WriteOutcome>>();
  /**
   * Events of a process whose start has not been answered yet: a child may
   * exit, or print, before the daemon has replied to process/start, and no
   * client should hear of a process before it knows the process exists.
   */
  private unannounced: ProcessEvent[] | undefined = [];
  /** Who wants the output paused (flow control); the host reads it only when nobody does. */
  private readonly pausedBy = new Set<object>();
  private chunkLimit: number | undefined;
  /** When it started (the host's clock), for listings and recordings. */
  startEpochMs = 0;
  /** Told once the host forgot it (retention budget): the session drops it. */
  onForgotten: () => void = () => undefined;

  constructor(
    readonly processId: string,
    readonly tty: boolean,
    private readonly options: ProcessOptions,
    private readonly onEvent: (process: ManagedProcess, event: ProcessEvent) => void,
  ) {}

  /** What the host tells of it: handed to ProcessHost.start (or bound by attach for a process a new daemon found). */
  get hostEvents(): ProcessEvents {
    return this.events;
  }

  /** The host started it (or a new daemon found it there). */
  attach(handle: number, pid: number, startEpochMs: number): void {
    this.handle = handle;
    this.processPid = pid;
    this.startEpochMs = startEpochMs;
    this.options.host.bind(handle, this.events);
    if (this.paused) this.options.host.pause(handle, true);
    if (this.chunkLimit !== undefined) this.options.host.limitChunks(handle, this.chunkLimit);
  }

  /** A process a new daemon found in the host: what happened before it, as the host tells it. */
  restore(state: ReadResult["state"]): void {
    this.seqCounter = state.nextSeq;
    this.heardBytes = state.retainedBytes;
    if (state.exited) this.exit = { code: state.exitCode, signal: state.signal, seq: state.exitSeq };
    if (state.closed) this.closedSeq = state.closedSeq;
    this.denied = state.sandboxDenied;
    this.unannounced = undefined;
  }

  /** What the host tells of it, as it happens. */
  private readonly events: ProcessEvents = {
    output: (seq, stream, data, frame) => {
      this.seqCounter = seq + 1;
      this.heardBytes += data.length;
      this.publish({ kind: "output", seq, stream, data, frame });
    },
    exited: (seq, exitCode, signal, sandboxDenied) => {
      this.seqCounter = seq + 1;
      this.exit = { code: exitCode, signal, seq };
      this.denied = sandboxDenied;
      this.publish({ kind: "exited", seq, exitCode });
    },
    closed: (seq) => {
      this.seqCounter = seq + 1;
      this.closedSeq = seq;
      this.publish({ kind: "closed", seq });
    },
    forgotten: () => {
      this.handle = undefined;
      this.onForgotten();
    },
  };

  // ---- state ----

  get pid(): number | undefined {
    return this.processPid;
  }
  get nextSeq(): number {
    return this.seqCounter;
  }
  /** At least as many output bytes as a read of it can return now. */
  get outputBytesHeard(): number {
    return this.heardBytes;
  }
  get exited(): boolean {
    return this.exit !== undefined;
  }
  get exitCode(): number | null {
    return this.exit?.code ?? null;
  }
  get exitSeq(): number | undefined {
    return this.exit?.seq;
  }
  get closed(): boolean {
    return this.closedSeq !== undefined;
  }
  get sandboxDenied(): boolean {
    return this.denied;
  }
  get sandboxed(): boolean {
    return this.options.sandboxed;
  }

  /** Retained output after `afterSeq`, from the host: at least one chunk, then up to `maxBytes`. */
  read(afterSeq: number, maxBytes: number): Promise<ReadResult> {
    if (this.handle === undefined) return Promise.resolve(this.emptyRead());
    return this.options.host.read(this.handle, afterSeq, maxBytes);
  }

  /**
   * The retained events after `afterSeq` as a client hears them: output, and
   * the exit and the close in their places among it. `caughtUp`: nothing is
   * left after them, in the host or heard live since (the host answers a
   * read after every event it produced before it), so live events follow on
   * from the next one, none sent twice nor skipped.
   */
  async readEvents(afterSeq: number, maxBytes: number): Promise<{ events: ProcessEvent[]; gap: OutputGap | undefined; caughtUp: boolean }> {
    const { state, gap, chunks } = await this.read(afterSeq, maxBytes);
    const events: ProcessEvent[] = chunks.map((chunk) => ({ kind: "output", seq: chunk.seq, stream: chunk.stream, data: chunk.data }));
    const through = events.length > 0 ? events[events.length - 1]!.seq : state.nextSeq - 1;
    if (state.exited && state.exitSeq > afterSeq && state.exitSeq <= through) events.push({ kind: "exited", seq: state.exitSeq, exitCode: state.exitCode });
    if (state.closed && state.closedSeq > afterSeq && state.closedSeq <= through) events.push({ kind: "closed", seq: state.closedSeq });
    events.sort((a, b) => a.seq - b.seq);
    return { events, gap, caughtUp: events.length === 0 && this.seqCounter <= state.nextSeq };
  }

  /** What a read returns once the host forgot the process (nothing retained). */
  private emptyRead(): ReadResult {
    return {
      state: {
        nextSeq: this.seqCounter,
        exited: this.exited,
        exitCode: this.exit?.code ?? 0,
        signal: this.exit?.signal ?? null,
        exitSeq: this.exit?.seq ?? 0,
        closed: this.closed,
        closedSeq: this.closedSeq ?? 0,
        sandboxDenied: this.denied,
        firstRetainedSeq: 0,
        retainedBytes: 0,
        startEpochMs: this.startEpochMs,
        reaped: this.exited,
        pid: this.processPid ?? 0,
      },
      gap: undefined,
      chunks: [],
    };
  }

  /** process/list's entry, from the host's state of it (undefined: as this daemon has heard it, nothing retained). */
  info(state?: ReadResult["state"]): ProcessInfo {
    const known = state ?? this.emptyRead().state;
    return {
      processId: this.processId,
      state: this.closed ? "closed" : this.exit ? "exited" : "running",
      tty: this.tty,
      pid: this.processPid ?? null,
      exitCode: this.exitCode,
      signal: this.exit?.signal ?? null,
      nextSeq: this.seqCounter,
      firstRetainedSeq: known.firstRetainedSeq === 0 ? this.seqCounter : known.firstRetainedSeq,
      retainedBytes: known.retainedBytes,
    };
  }

  get hostHandle(): number | undefined {
    return this.handle;
  }

  // ---- input ----

  /**
   * Input for the child. What the child has not read yet is held (in the
   * host) up to maxStdinBufferBytes: a write that does not fit waits, its
   * reply with it, until the child has read enough, like a blocking write
   * to a pipe, which paces a client that awaits its writes. One write may
   * wait per process; another one meanwhile, or one larger than the bound,
   * is refused ("stdinFull"), so input is never reordered nor held without bound.
   */
  write(data: Buffer, writeId: string | null | undefined): WriteOutcome | Promise<WriteOutcome> {
    if (writeId) {
      const earlier = this.writeIds.get(writeId);
      if (earlier !== undefined) return earlier;
      const pending = this.pendingWrites.get(writeId);
      if (pending) return pending;
    }
    if (this.handle === undefined) return this.closed ? "stdinClosed" : "starting";
    const written = this.options.host.write(this.handle, this.options.maxStdinBufferBytes, data).then(
      (result): WriteOutcome => (result === "unknownProcess" ? "stdinClosed" : result),
      (): WriteOutcome => "stdinClosed",
    );
    const done = written.then((status) => {
      if (writeId) this.pendingWrites.delete(writeId);
      return this.remember(writeId, status);
    });
    if (writeId) this.pendingWrites.set(writeId, done);
    return done;
  }

  /** Whether a write with this id was taken already (a retry writes nothing again). */
  isRetry(writeId: string | null | undefined): boolean {
    return !!writeId && (this.writeIds.has(writeId) || this.pendingWrites.has(writeId));
  }

  private remember(writeId: string | null | undefined, status: WriteOutcome): WriteOutcome {
    if (writeId && status !== "stdinFull") {
      this.writeIds.set(writeId, status);
      if (this.writeIds.size > REMEMBERED_WRITE_IDS) this.writeIds.delete(this.writeIds.keys().next().value!);
    }
    return status;
  }

  async closeStdin(): Promise<WriteStatus> {
    if (this.handle === undefined) return this.closed ? "stdinClosed" : "starting";
    const result = await this.options.host.closeStdin(this.handle).catch(() => "stdinClosed" as const);
    return result === "unknownProcess" || result === "stdinFull" ? "stdinClosed" : result;
  }

  // ---- flow control ----

  /**
   * While any holder keeps the process paused the host stops reading its
   * output, so the child blocks on write instead of output piling up.
   */
  setPaused(holder: object, paused: boolean): void {
    const before = this.pausedBy.size > 0;
    if (paused) this.pausedBy.add(holder);
    else this.pausedBy.delete(holder);
    const after = this.pausedBy.size > 0;
    if (before !== after && this.handle !== undefined && !this.closed) this.options.host.pause(this.handle, after);
  }

  get paused(): boolean {
    return this.pausedBy.size > 0;
  }

  isPausedBy(holder: object): boolean {
    return this.pausedBy.has(holder);
  }

  /** Flow control: the most output one chunk may hold from now on. */
  limitChunks(bytes: number): void {
    if (bytes === this.chunkLimit) return;
    this.chunkLimit = bytes;
    if (this.handle !== undefined && !this.closed) this.options.host.limitChunks(this.handle, bytes);
  }

  // ---- control ----

  resize(cols: number, rows: number): void {
    if (this.handle !== undefined && !this.closed) this.options.host.resize(this.handle, cols, rows);
  }

  /** On a PTY to the foreground job, as a key press would; otherwise to the child's process group. */
  signal(signal: NodeJS.Signals): void {
    if (this.handle !== undefined && !this.closed) this.options.host.signal(this.handle, signal);
  }

  /** SIGTERM to the whole tree, SIGKILL after the grace period; false when it had already exited, as upstream. */
  async terminate(): Promise<boolean> {
    if (this.handle === undefined || this.exit) return false;
    return this.options.host.terminate(this.handle).catch(() => false);
  }

  /** Resolves on the next event of this process, after `ms`, or on abort; at once if something came after `sinceSeq`. */
  waitForChange(ms: number, abort: AbortSignal, sinceSeq?: number): Promise<void> {
    if (abort.aborted || ms <= 0 || (sinceSeq !== undefined && this.seqCounter > sinceSeq)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        abort.removeEventListener("abort", done);
        this.waiters.delete(done);
        resolve();
      };
      // setTimeout's limit; longer waits simply return and are re-issued.
      const timer = setTimeout(done, Math.min(ms, 2 ** 31 - 1));
      abort.addEventListener("abort", done);
      this.waiters.add(done);
    });
  }

  /** The process is forgotten: the host lets it go, and its retained output. */
  dispose(): void {
    if (this.handle !== undefined) this.options.host.forget(this.handle);
    this.handle = undefined;
  }

  /** The start's reply is out: what happened so far is sent, and from now on as it happens. */
  announce(): void {
    const held = this.unannounced ?? [];
    this.unannounced = undefined;
    for (const event of held) this.onEvent(this, event);
  }

  private publish(event: ProcessEvent): void {
    if (this.unannounced) this.unannounced.push(event);
    else this.onEvent(this, event);
    for (const wake of [...this.waiters]) wake();
  }
}

export type { OutputGap };
