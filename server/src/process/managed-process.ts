/**
 * One process of a session as the protocol sees it: a seq counter shared by
 * output, exit and close; retained output; exit status; and the rules of
 * upstream's local backend (close comes last, after exit and after every
 * stream ended; output after exit is kept).
 */
import { SignalNumbers, type OutputGap, type OutputStream, type ProcessInfo, type WriteStatus } from "@execmux/shared";
import type { Child, ChildEvents } from "./child.js";
import { OutputCoalescer } from "./output-coalescer.js";
import { OutputLog, type RetentionCharge } from "./output-log.js";
import { releaseSlab, retainSlab } from "./slab-pool.js";
import { foregroundGroup, signalGroup } from "./process-tree.js";
import { ProcTrees } from "./proc-trees.js";
import type { TreeHandle } from "./process-trees.js";
import { isLikelySandboxDenied } from "../sandbox/sandbox-denied.js";

export type ProcessEvent =
  | { readonly kind: "output"; readonly seq: number; readonly stream: OutputStream; readonly data: Buffer }
  | { readonly kind: "exited"; readonly seq: number; readonly exitCode: number }
  | { readonly kind: "closed"; readonly seq: number };

export interface ProcessOptions {
  readonly retainedBytes: number;
  readonly killGraceMs: number;
  /** Runs in a sandbox: its exit is judged for `sandboxDenied`. */
  readonly sandboxed?: boolean;
  /** Input held for the child that it has not read yet; a write past it is refused. */
  readonly maxStdinBufferBytes?: number;
  /** The daemon's retention budget, charged for this process's retained output. */
  readonly retentionBudget?: RetentionCharge;
  /** How the child's whole tree is reached (process-trees.ts); by default its group and /proc. */
  readonly tree?: TreeHandle;
}

/**
 * How long a reaped child's exit waits for its output streams to end when a
 * descendant still holds them open. Not a speed setting: it only orders a
 * short child's last output before its exit, as upstream numbers them.
 */
const EXIT_WAITS_FOR_OUTPUT_MS = 50;

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

export class ManagedProcess {
  readonly log: OutputLog;
  private child: Child | undefined;
  private seqCounter = 1;
  /** Counted, not subtracted from an open count: a child may report before it is attached. */
  private endedStreams = 0;
  private exit: { code: number; signal: NodeJS.Signals | null; seq: number } | undefined;
  /** The child was reaped; its exit is published once its output is in (see `exited`). */
  private reapedExit: { code: number; signal: NodeJS.Signals | null } | undefined;
  private exitTimer: NodeJS.Timeout | undefined;
  private closedSeq: number | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly writeIds = new Map<string, WriteStatus>();
  private killTimer: NodeJS.Timeout | undefined;
  /**
   * Events of a process whose start has not been answered yet: a child may
   * exit, or print, before the daemon has replied to process/start, and no
   * client should hear of a process before it knows the process exists.
   */
  private unannounced: ProcessEvent[] | undefined = [];
  /** Who wants the output paused (flow control); the child reads only when nobody does. */
  private readonly pausedBy = new Set<object>();
  private chunkLimit: number | undefined;
  /** Upstream's `sandboxDenied`: decided at exit, from the output retained by then. No sandbox, never. */
  private denied = false;

  constructor(
    readonly processId: string,
    readonly tty: boolean,
    private readonly options: ProcessOptions,
    private readonly onEvent: (process: ManagedProcess, event: ProcessEvent) => void,
  ) {
    this.log = new OutputLog(options.retainedBytes, options.retentionBudget);
    this.tree = options.tree ?? new ProcTrees().create(this);
  }

  private readonly tree: TreeHandle;

  /** The callbacks to hand to a spawner. */
  private readonly coalescer = new OutputCoalescer((stream, data) => {
    const seq = this.seqCounter++;
    this.log.append(seq, stream, data);
    this.publish({ kind: "output", seq, stream, data });
  });

  readonly childEvents: ChildEvents = {
    output: (stream, data, read) => this.coalescer.push(stream, data, read),
    streamEnded: () => {
      this.coalescer.flush();
      this.endedStreams++;
      if (this.allStreamsEnded) this.publishExit();
      this.closeIfDone();
    },
    exited: (code, signal) => {
      // A signal death is reported the way shells do: 128 + signal number.
      const exitCode = code ?? 128 + (signal ? SignalNumbers[signal as keyof typeof SignalNumbers] ?? 0 : 0);
      this.reapedExit = { code: exitCode, signal };
      // The reap (from the spawner's channel) can overtake output the child
      // wrote before it exited and that still waits in its pipe. Upstream
      // numbers that output before the exit; so does execmux: the exit is
      // published once the streams end (at once for a child whose pipes
      // closed with it), or after a short wait when a descendant keeps them
      // open; output after that comes after the exit, as upstream allows.
      if (this.allStreamsEnded) this.publishExit();
      else this.exitTimer ??= setTimeout(() => this.publishExit(), EXIT_WAITS_FOR_OUTPUT_MS);
    },
  };

  attach(child: Child): void {
    this.child = child;
    this.tree.bind(child.pid);
    if (this.paused) child.pause();
    if (this.chunkLimit !== undefined) child.limitChunks(this.chunkLimit);
    // Its exit and end of output may have been reported already.
    if (this.allStreamsEnded) this.publishExit();
    this.closeIfDone();
  }

  private get allStreamsEnded(): boolean {
    return this.child !== undefined && this.endedStreams >= this.child.streams.length;
  }

  private publishExit(): void {
    if (!this.reapedExit || this.exit) return;
    clearTimeout(this.exitTimer);
    // Output read before now keeps its place before the exit.
    this.coalescer.flush();
    const seq = this.seqCounter++;
    const { code, signal } = this.reapedExit;
    this.exit = { code, signal, seq };
    if (this.options.sandboxed) this.denied = isLikelySandboxDenied(code, () => this.retainedText());
    this.publish({ kind: "exited", seq, exitCode: code });
    this.closeIfDone();
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }
  get nextSeq(): number {
    return this.seqCounter;
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

  /** The retained output as text, every stream. */
  private retainedText(): string {
    return Buffer.concat(Array.from(this.log.chunksAfter(0), (chunk) => chunk.data)).toString("utf8");
  }

  /**
   * The first retained event after `cursor` (output, exit or close), for a
   * resume with cursors, which sends them one at a time as the socket
   * drains; undefined once the replay has caught up with the process.
   */
  eventAfter(cursor: number): ProcessEvent | undefined {
    const candidates: ProcessEvent[] = [];
    const chunk = this.log.firstAfter(cursor);
    if (chunk) candidates.push({ kind: "output", seq: chunk.seq, stream: chunk.stream, data: chunk.data });
    if (this.exit && this.exit.seq > cursor) candidates.push({ kind: "exited", seq: this.exit.seq, exitCode: this.exit.code });
    if (this.closedSeq !== undefined && this.closedSeq > cursor) candidates.push({ kind: "closed", seq: this.closedSeq });
    return candidates.reduce<ProcessEvent | undefined>((first, event) => (first && first.seq < event.seq ? first : event), undefined);
  }

  /** What was evicted after `cursor` (a resume sends it as process/gap), or undefined. */
  gapAfter(cursor: number): OutputGap | undefined {
    return this.log.gapAfter(cursor, this.exit?.seq);
  }

  info(): ProcessInfo {
    return {
      processId: this.processId,
      state: this.closed ? "closed" : this.exit ? "exited" : "running",
      tty: this.tty,
      pid: this.child?.pid ?? null,
      exitCode: this.exitCode,
      signal: this.exit?.signal ?? null,
      nextSeq: this.seqCounter,
      firstRetainedSeq: this.log.firstSeq ?? this.seqCounter,
      retainedBytes: this.log.retainedBytes,
    };
  }

  /**
   * Input for the child. What the child has not read yet is held up to
   * maxStdinBufferBytes: a write that does not fit waits (its reply with it)
   * until the child has read enough, like a blocking write to a pipe, which
   * paces a client that awaits its writes. One write may wait per process;
   * another one meanwhile, or one larger than the bound, is refused
   * ("stdinFull"), so input is never reordered nor held without bound.
   */
  write(data: Buffer, writeId: string | null | undefined): WriteOutcome | Promise<WriteOutcome> {
    if (writeId) {
      const earlier = this.writeIds.get(writeId);
      if (earlier !== undefined) return earlier;
      if (this.waitingWrite && this.waitingWrite.writeId === writeId) return this.waitingWrite.done;
    }
    const bound = this.options.maxStdinBufferBytes ?? Number.POSITIVE_INFINITY;
    if (this.waitingWrite || data.length > bound) return "stdinFull";
    const status = this.writeNow(data);
    if (status !== "stdinFull") return this.remember(writeId, status);
    const done = this.child!.whenStdinBelow(bound - data.length).then(() => {
      this.waitingWrite = undefined;
      return this.remember(writeId, this.writeNow(data));
    });
    this.waitingWrite = { writeId: writeId ?? undefined, done };
    return done;
  }

  private waitingWrite: { readonly writeId: string | undefined; readonly done: Promise<WriteOutcome> } | undefined;

  /** Whether a write with this id was taken already (a retry writes nothing again). */
  isRetry(writeId: string | null | undefined): boolean {
    return !!writeId && (this.writeIds.has(writeId) || this.waitingWrite?.writeId === writeId);
  }

  private remember(writeId: string | null | undefined, status: WriteOutcome): WriteOutcome {
    if (writeId && status !== "stdinFull") {
      this.writeIds.set(writeId, status);
      if (this.writeIds.size > REMEMBERED_WRITE_IDS) {
        this.writeIds.delete(this.writeIds.keys().next().value!);
      }
    }
    return status;
  }

  closeStdin(): WriteStatus {
    if (!this.child) return "starting";
    if (!this.child.stdinOpen) return "stdinClosed";
    this.child.closeStdin();
    return "accepted";
  }

  /**
   * Flow control: while any holder keeps the process paused the daemon stops
   * reading its output, so the child blocks on write instead of the daemon
   * buffering without bound.
   */
  setPaused(holder: object, paused: boolean): void {
    const before = this.pausedBy.size > 0;
    if (paused) this.pausedBy.add(holder);
    else this.pausedBy.delete(holder);
    const after = this.pausedBy.size > 0;
    if (before === after || !this.child) return;
    if (after) this.child.pause();
    else this.child.resume();
  }

  get paused(): boolean {
    return this.pausedBy.size > 0;
  }

  /** Flow control: the most output one chunk may hold from now on. */
  limitChunks(bytes: number): void {
    if (bytes === this.chunkLimit) return;
    this.chunkLimit = bytes;
    this.coalescer.limitTo(bytes);
    this.child?.limitChunks(bytes);
  }

  isPausedBy(holder: object): boolean {
    return this.pausedBy.has(holder);
  }

  resize(cols: number, rows: number): void {
    this.child?.resize(cols, rows);
  }

  /** Sends a signal the way a terminal user would mean it: on a PTY to the
   * foreground job, otherwise to the child's process group. */
  signal(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined || this.closed) return;
    signalGroup(this.tty ? foregroundGroup(pid) : pid, signal);
  }

  /**
   * SIGTERM to the whole tree, SIGKILL after the grace period to whatever is
   * left (the leader may exit while descendants linger). False when it had
   * already exited, as upstream.
   */
  terminate(): boolean {
    const pid = this.child?.pid;
    if (pid === undefined || this.reapedExit) return false;
    this.tree.signalAll("SIGTERM");
    this.killTimer ??= setTimeout(() => this.tree.kill(), this.options.killGraceMs);
    return true;
  }

  /** Resolves on the next event of this process, after `ms`, or on abort. */
  waitForChange(ms: number, abort: AbortSignal): Promise<void> {
    if (abort.aborted || ms <= 0) return Promise.resolve();
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

  /** Bytes written to the child that it has not read yet, as far as the daemon holds them. */
  get stdinQueuedBytes(): number {
    return this.child?.stdinQueuedBytes ?? 0;
  }

  private writeNow(data: Buffer): WriteOutcome {
    if (!this.child) return "starting";
    // Not refused after exit: on a PTY a grandchild may still read the
    // terminal. (Node itself closes a pipe stdin when the child exits.)
    if (!this.child.stdinOpen) return "stdinClosed";
    const bound = this.options.maxStdinBufferBytes ?? Number.POSITIVE_INFINITY;
    if (this.child.stdinQueuedBytes + data.length > bound) return "stdinFull";
    this.child.write(data);
    return "accepted";
  }

  /** The process is forgotten: its retained output goes, and its charge with it. */
  dispose(): void {
    this.log.dispose();
  }

  private closeIfDone(): void {
    if (this.closed || !this.exit || !this.child || this.endedStreams < this.child.streams.length) return;
    const seq = this.seqCounter++;
    this.closedSeq = seq;
    this.publish({ kind: "closed", seq });
    // The leader is gone and its output closed: anything left in its group is
    // an orphan nobody can read from or signal through the protocol. After a
    // terminate, the rest of its tree goes too.
    if (this.killTimer) {
      clearTimeout(this.killTimer);
      this.killTimer = undefined;
      this.tree.kill();
    } else {
      this.tree.killGroup();
    }
    // What is left (a daemon it started with setsid) lives on until its owner ends.
    this.tree.release();
  }

  /** The start's reply is out: what happened so far is sent, and from now on as it happens. */
  announce(): void {
    const held = this.unannounced ?? [];
    this.unannounced = undefined;
    for (const event of held) {
      this.onEvent(this, event);
      if (event.kind === "output") releaseSlab(event.data);
    }
  }

  private publish(event: ProcessEvent): void {
    if (this.unannounced) {
      this.unannounced.push(event);
      if (event.kind === "output") retainSlab(event.data);
    } else this.onEvent(this, event);
    for (const wake of [...this.waiters]) wake();
  }
}
