/** The daemon's poll after rapid input as a pure unit, on fake timers and a hand-moved clock. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PollAfterInput } from "../server/dist/rpc/poll-after-input.js";

describe("PollAfterInput", () => {
  let clock: number;
  const poll = (windowMicros: number) => new PollAfterInput(windowMicros, () => clock);
  /** Runs one loop iteration's immediates; true if the poll asked for another iteration. */
  const iterate = () => {
    vi.runOnlyPendingTimers();
    return vi.getTimerCount() > 0;
  };
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setImmediate"] });
    clock = 1000;
  });
  afterEach(() => vi.useRealTimers());

  it("never polls for input that comes a keystroke at a time", () => {
    const typing = poll(200);
    for (let key = 0; key < 5; key++) {
      typing.written();
      expect(vi.getTimerCount()).toBe(0);
      clock += 50;
    }
  });

  it("keeps polling after each write of a rapid exchange until its window has passed, then sleeps", () => {
    const exchange = poll(200);
    exchange.written();
    clock += 0.5;
    exchange.written();
    expect(vi.getTimerCount()).toBe(1);
    clock += 0.1;
    expect(iterate()).toBe(true);
    // The next write of the exchange extends the window rather than starting a second poll.
    exchange.written();
    expect(vi.getTimerCount()).toBe(1);
    clock += 0.15;
    expect(iterate()).toBe(true);
    clock += 0.1;
    expect(iterate()).toBe(false);
  });

  it("does nothing when turned off", () => {
    const off = poll(0);
    off.written();
    off.written();
    expect(vi.getTimerCount()).toBe(0);
  });
});
