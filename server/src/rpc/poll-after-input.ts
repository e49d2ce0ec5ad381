/**
 * While a client and a process are exchanging input and output quickly (an
 * agent driving a REPL, the bench's echo round trips), the daemon can keep
 * its event loop polling (epoll without a timeout) for a moment after each
 * write instead of going to sleep, so the process's answer and the client's
 * next message are read at once. Whether that helps depends on the machine
 * and on the process, so each exchange finds out for itself:
 *
 * - on a VM without guest halt-polling and CPUs to spare, waking an idle CPU
 *   can take longer than the exchange itself, and polling roughly halved
 *   echo round trips (an Intel VM);
 * - on a 2-core AMD EPYC VM, polling shortened a PTY's echo (the kernel
 *   echoes, nothing else needs a CPU) but lengthened a pipe's by a third:
 *   the polling daemon takes the CPU that `cat` and the client need.
 *
 * So an exchange's rapid writes are timed (write to next write: the whole
 * round trip as the daemon sees it) in a trial of four blocks, polling off,
 * on, on, off (so a drift in load counts against both alike), and it keeps
 * polling only if the median round trip with polling was the shorter. The
 * trial is repeated every few thousand writes, as load changes.
 *
 * While it polls, the write's reply waits for the process's answer (its
 * next output, exit or close, handed to the connection's socket) or for the
 * window's end, whichever comes first. Building and sending the reply took
 * about 35 µs of a 200 µs round trip on the 2-core AMD VM, all of it before
 * the daemon looked for the echo again; afterwards it is off the echo's
 * path. Interleaved on that VM with polling on: pipe echo p50 0.195-0.202
 * ms before, 0.150-0.159 after; PTY 0.188-0.218, 0.149-0.160. A process
 * that prints nothing back costs each polled write's reply the window, and
 * the trial sees that in its round trips. Nothing depends on the order: a
 * client matches replies by id (and replies still overtake output that
 * waits for a backed-up socket, see outbound.ts).
 *
 * It costs CPU only during such an exchange: a write less than RAPID_MS
 * after the one before starts a poll of at most the configured window.
 * Keystrokes of a person typing are further apart and never start one.
 */

/** Writes closer together than this are an exchange in progress. */
const RAPID_MS = 1;
/** Round trips timed per block of a trial: enough for a median that a few preemptions do not move. */
const TRIAL_BLOCK_WRITES = 64;
/** Whether each block of a trial polls: ABBA, so a trend over the trial weighs on both alike. */
const TRIAL_ORDER = [false, true, true, false] as const;
/**
 * Rapid writes between trials: the machine's load, and so the answer,
 * changes. The first gaps are shorter (doubling from one trial's length):
 * a new process's first few hundred round trips were twice as long as
 * later ones on the AMD VM, with or without polling (the kernel learning
 * the new task, not the daemon), so what the first trial finds is revisited
 * soon.
 */
const WRITES_BETWEEN_TRIALS = 4096;

/** One process's exchange: its last write, and what its trials found. */
class Exchange {
  lastInputAt = Number.NEGATIVE_INFINITY;
  /** Whether the window after the last write polled: the round trip that follows counts for that side. */
  polledLast = false;
  /** Rapid writes so far in the current trial, or since it ended. */
  private writes = 0;
  /** Rapid writes from this trial's end to the next trial: one trial's length at first, doubling to WRITES_BETWEEN_TRIALS. */
  private gap = TRIAL_ORDER.length * TRIAL_BLOCK_WRITES;
  private inTrial = true;
  private choice = false;
  private readonly roundTrips = { on: [] as number[], off: [] as number[] };

  /** A rapid write `roundTrip` ms after the one before: whether to poll after it. `decided` hears each trial's outcome. */
  next(roundTrip: number, decided: (poll: boolean) => void): boolean {
    if (!this.inTrial) {
      if (this.writes++ < this.gap) return this.choice;
      this.gap = Math.min(2 * this.gap, WRITES_BETWEEN_TRIALS);
      this.inTrial = true;
      this.writes = 0;
      this.roundTrips.on.length = this.roundTrips.off.length = 0;
    } else if (this.writes > 0) {
      // The first write of a trial follows a round trip of the choice before it.
      (this.polledLast ? this.roundTrips.on : this.roundTrips.off).push(roundTrip);
    }
    const block = Math.floor(this.writes++ / TRIAL_BLOCK_WRITES);
    if (block < TRIAL_ORDER.length) return TRIAL_ORDER[block]!;
    this.choice = median(this.roundTrips.on) < median(this.roundTrips.off);
    decided(this.choice);
    this.inTrial = false;
    this.writes = 0;
    return this.choice;
  }
}

function median(values: number[]): number {
  values.sort((a, b) => a - b);
  return values[values.length >> 1] ?? Number.POSITIVE_INFINITY;
}

/** Replies of one process's writes, held until it answers or `until`. */
interface HeldReplies {
  readonly until: number;
  readonly release: (() => void)[];
}

export class PollAfterInput {
  private readonly exchanges = new WeakMap<object, Exchange>();
  /** At most one entry per process that was written to within the window. */
  private readonly held = new Map<object, HeldReplies>();
  private until = 0;
  private polling = false;

  /** `windowMicros` 0 turns polling off. `decided` hears each trial's outcome (a metric: what trials decide on this machine). */
  constructor(
    private readonly windowMicros: number,
    private readonly now: () => number = () => performance.now(),
    private readonly decided: (poll: boolean) => void = () => undefined,
  ) {}

  /**
   * Input was just written to `process` (any object that stands for it).
   * When the daemon polls after it, a promise the write's reply waits for:
   * it resolves once `answered(process)` is called or the window has passed.
   */
  written(process: object): Promise<void> | undefined {
    if (this.windowMicros <= 0) return undefined;
    const now = this.now();
    let exchange = this.exchanges.get(process);
    if (!exchange) this.exchanges.set(process, (exchange = new Exchange()));
    const sinceLast = now - exchange.lastInputAt;
    exchange.lastInputAt = now;
    const poll = sinceLast < RAPID_MS && exchange.next(sinceLast, this.decided);
    exchange.polledLast = poll;
    if (!poll) return undefined;
    const until = now + this.windowMicros / 1000;
    this.until = Math.max(this.until, until);
    if (!this.polling) {
      this.polling = true;
      setImmediate(this.tick);
    }
    // A later write joins the replies already held, and their deadline: a
    // client writing faster than the window to a process that never answers
    // still gets each reply within the window.
    let held = this.held.get(process);
    if (!held) this.held.set(process, (held = { until, release: [] }));
    const release = held.release;
    return new Promise((resolve) => release.push(resolve));
  }

  /** `process` answered (its output, exit or close was just sent): the replies held for it go now. */
  answered(process: object): void {
    if (this.held.size === 0) return;
    const held = this.held.get(process);
    if (!held) return;
    this.held.delete(process);
    for (const release of held.release) release();
  }

  /** One loop iteration: while an immediate is pending, libuv polls without blocking. */
  private readonly tick = (): void => {
    const now = this.now();
    for (const [process, held] of this.held) if (now >= held.until) this.answered(process);
    if (now < this.until) setImmediate(this.tick);
    else this.polling = false;
  };
}
