/** The daemon's poll after rapid input as a pure unit, on fake timers and a hand-moved clock. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PollAfterInput } from "../server/dist/rpc/poll-after-input.js";

/** Writes per block of a trial, and blocks per trial (off, on, on, off), as in poll-after-input.ts. */
const BLOCK = 64;
const TRIAL = 4 * BLOCK;

describe("PollAfterInput", () => {
  let clock: number;
  /** What each trial decided, in order. */
  let decisions: boolean[];
  const poll = (windowMicros: number) => new PollAfterInput(windowMicros, () => clock, (decided) => decisions.push(decided));
  /** Runs one loop iteration's immediates; true if the poll asked for another iteration. */
  const iterate = () => {
    vi.runOnlyPendingTimers();
    return vi.getTimerCount() > 0;
  };
  /** Lets a started poll run out, so the next write shows whether it starts one. */
  const settle = () => {
    clock += 1;
    while (iterate());
    clock -= 1;
  };
  /**
   * One rapid write of `process`, `roundTripMs` after its last one: whether it
   * started a poll. `withPoll`, when given, is the round trip that follows a
   * write that polled.
   */
  const exchange = (poller: PollAfterInput, process: object, roundTripMs: number, withPoll = roundTripMs) => {
    settle();
    poller.written(process);
    const polled = vi.getTimerCount() > 0;
    clock += polled ? withPoll : roundTripMs;
    return polled;
  };
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setImmediate"] });
    clock = 1000;
    decisions = [];
  });
  afterEach(() => vi.useRealTimers());

  it("never polls for input that comes a keystroke at a time", () => {
    const typing = poll(200);
    const process = {};
    for (let key = 0; key < 5; key++) {
      typing.written(process);
      expect(vi.getTimerCount()).toBe(0);
      clock += 50;
    }
  });

  it("tries a rapid exchange without polling, then with, and polls until the window has passed", () => {
    const poller = poll(200);
    const process = {};
    poller.written(process);
    clock += 0.5;
    for (let write = 0; write < BLOCK; write++) expect(exchange(poller, process, 0.3)).toBe(false);
    // The second block of the trial polls after each write, for the window.
    settle();
    poller.written(process);
    expect(vi.getTimerCount()).toBe(1);
    clock += 0.1;
    expect(iterate()).toBe(true);
    // The next write extends the window rather than starting a second poll.
    poller.written(process);
    expect(vi.getTimerCount()).toBe(1);
    clock += 0.15;
    expect(iterate()).toBe(true);
    clock += 0.1;
    expect(iterate()).toBe(false);
  });

  it("keeps polling an exchange whose round trips it shortened", () => {
    const poller = poll(200);
    const process = {};
    poller.written(process);
    clock += 0.5;
    for (let write = 0; write < TRIAL; write++) exchange(poller, process, 0.4, 0.2);
    for (let write = 0; write < 100; write++) expect(exchange(poller, process, 0.4, 0.2)).toBe(true);
    expect(decisions).toEqual([true]);
  });

  it("stops polling an exchange whose round trips it lengthened, and tries again: soon at first, then every 4096 writes", () => {
    const poller = poll(200);
    const process = {};
    poller.written(process);
    clock += 0.5;
    // Where each trial's polling blocks begin: a trial, the write that
    // decides, the gap, the next trial.
    const pollsBegin: number[] = [];
    let pollingBefore = false;
    for (let write = 0; write < 20_000; write++) {
      const polled = exchange(poller, process, 0.2, 0.4);
      if (polled && !pollingBefore) pollsBegin.push(write);
      pollingBefore = polled;
    }
    const gaps = pollsBegin.slice(1).map((begin, index) => begin - pollsBegin[index]! - TRIAL - 1);
    expect(gaps).toEqual([256, 512, 1024, 2048, 4096, 4096, 4096]);
    // Nine trials in all, each of which stopped polling; the last is still under way.
    expect(pollsBegin.length).toBe(8);
    expect(decisions).toEqual(Array(8).fill(false));
  });

  describe("the reply of a write it polls after", () => {
    /** A poller in the polling block of its first trial, and the process it polls for. */
    const polling = () => {
      const poller = poll(200);
      const process = {};
      poller.written(process);
      clock += 0.5;
      for (let write = 0; write < BLOCK; write++) exchange(poller, process, 0.3);
      settle();
      return { poller, process };
    };
    /** Whether the promise has resolved, after the microtasks already queued ran. */
    const resolved = async (promise: Promise<void> | undefined) => {
      let done = false;
      void promise?.then(() => (done = true));
      await Promise.resolve();
      await Promise.resolve();
      return done;
    };

    it("waits for the process's answer, not another process's", async () => {
      const { poller, process } = polling();
      const held = poller.written(process);
      expect(held).toBeInstanceOf(Promise);
      expect(await resolved(held)).toBe(false);
      poller.answered({});
      expect(await resolved(held)).toBe(false);
      poller.answered(process);
      expect(await resolved(held)).toBe(true);
    });

    it("goes when the window has passed without an answer, and a later write does not extend its wait", async () => {
      const { poller, process } = polling();
      const first = poller.written(process);
      clock += 0.1;
      expect(iterate()).toBe(true);
      const second = poller.written(process);
      expect(await resolved(first)).toBe(false);
      clock += 0.1;
      iterate();
      expect(await resolved(first)).toBe(true);
      expect(await resolved(second)).toBe(true);
    });

    it("is not held when the write does not poll", () => {
      const poller = poll(200);
      const process = {};
      expect(poller.written(process)).toBeUndefined();
      clock += 0.5;
      expect(poller.written(process)).toBeUndefined();
      expect(poll(0).written(process)).toBeUndefined();
    });
  });

  it("decides for each process on its own", () => {
    const poller = poll(200);
    const helped = {};
    const hurt = {};
    poller.written(helped);
    clock += 0.5;
    for (let write = 0; write < TRIAL; write++) exchange(poller, helped, 0.4, 0.2);
    poller.written(hurt);
    clock += 0.5;
    for (let write = 0; write < TRIAL; write++) exchange(poller, hurt, 0.2, 0.4);
    expect(exchange(poller, hurt, 0.2, 0.4)).toBe(false);
    // Back after a pause, the first write is not part of an exchange; the next one is.
    exchange(poller, helped, 0.4, 0.2);
    expect(exchange(poller, helped, 0.4, 0.2)).toBe(true);
  });

  it("does nothing when turned off", () => {
    const off = poll(0);
    const process = {};
    for (let write = 0; write < TRIAL; write++) {
      off.written(process);
      clock += 0.1;
      expect(vi.getTimerCount()).toBe(0);
    }
  });
});
