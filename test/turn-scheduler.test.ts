/**
 * The daemon's fair turns (rpc/turn-scheduler.ts), as a pure unit with a
 * clock the test moves: how long anything takes is the bench's business
 * (section 8); here, who goes when.
 */
import { describe, expect, it } from "vitest";
import { TurnScheduler } from "../server/dist/rpc/turn-scheduler.js";

/** A clock that only moves when work says it took time. */
function fakeClock() {
  let now = 0;
  return { now: () => now, spend: (ms: number) => (now += ms) };
}

const nextRound = () => new Promise((resolve) => setImmediate(resolve));

describe("TurnScheduler", () => {
  it("runs work at once while nobody waits and the turn has time, and queues it once the turn is spent", async () => {
    const clock = fakeClock();
    const turns = new TurnScheduler(2, clock.now);
    const ran: string[] = [];
    turns.run("a", () => (ran.push("a1"), clock.spend(1.5)));
    turns.run("b", () => ran.push("b1"));
    clock.spend(1);
    turns.run("a", () => ran.push("a2"));
    // Once someone waits, everyone queues behind them, even with time left.
    turns.run("b", () => ran.push("b2"));
    expect(ran).toEqual(["a1", "b1"]);
    expect(turns.waitingOwners).toBe(2);
    await nextRound();
    expect(ran).toEqual(["a1", "b1", "a2", "b2"]);
  });

  it("serves waiting owners one unit each in rotation: a newcomer waits for one unit of each, not for their backlogs", async () => {
    const clock = fakeClock();
    const turns = new TurnScheduler(2, clock.now);
    const ran: string[] = [];
    // A unit that spends this turn's time: everything after it queues.
    turns.run("starter", () => clock.spend(5));
    for (let flooder = 0; flooder < 8; flooder++) {
      for (let unit = 0; unit < 100; unit++) turns.enqueue(`flooder-${flooder}`, () => (ran.push(`flooder-${flooder}`), clock.spend(0.01)));
    }
    await nextRound();
    const before = ran.length;
    turns.enqueue("bystander", () => ran.push("bystander"));
    while (!ran.includes("bystander")) await nextRound();
    // Exactly one unit of each of the eight flooders came first.
    const ahead = ran.slice(before, ran.indexOf("bystander"));
    expect(ahead.sort()).toEqual(Array.from({ length: 8 }, (_, flooder) => `flooder-${flooder}`));
  });

  it("stops a round when its time is spent and goes on in the next, so the event loop turns in between", async () => {
    const clock = fakeClock();
    const turns = new TurnScheduler(2, clock.now);
    let ran = 0;
    turns.run("starter", () => clock.spend(5));
    for (let unit = 0; unit < 10; unit++) turns.enqueue("busy", () => (ran++, clock.spend(1)));
    await nextRound();
    expect(ran).toBe(2);
    await nextRound();
    expect(ran).toBe(4);
  });

  it("runs a forgotten owner's waiting work at once", () => {
    const clock = fakeClock();
    const turns = new TurnScheduler(2, clock.now);
    turns.run("starter", () => clock.spend(5));
    let released = false;
    turns.run("gone", () => (released = true));
    expect(released).toBe(false);
    turns.forget("gone");
    expect(released).toBe(true);
    expect(turns.waitingOwners).toBe(0);
  });
});
