/**
 * The daemon's fair turns (rpc/turn-scheduler.ts), as a pure unit with a
 * clock the test moves: how long anything takes is the bench's business
 * (section 8); here, who goes when.
 */
import { describe, expect, it } from "vitest";
import { CLIENT_SHARE, ClientShares, SHARE_WINDOW_MS } from "../server/dist/rpc/client-shares.js";
import { TurnScheduler, lifecycleOf } from "../server/dist/rpc/turn-scheduler.js";

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

  describe("each client's share of the event loop", () => {
    /** Enough of one client's unit time to be past its share, in one unit. */
    const pastShare = CLIENT_SHARE * SHARE_WINDOW_MS * 1.5;
    /** A connection, as the turns see one: its client is whose share it counts against, with its own. */
    const connection = (client: string) => ({ client });

    it("passes over a client past its share while another is active, and serves it again once the window has let it within", async () => {
      const clock = fakeClock();
      const turns = new TurnScheduler(2, clock.now);
      const flood = connection("mallory");
      const ran: string[] = [];
      turns.run(flood, () => (ran.push("flood-1"), clock.spend(pastShare)));
      const floodAgain = new Promise<void>((resolve) => turns.enqueue(flood, () => (ran.push("flood-2"), resolve())));
      turns.enqueue(connection("alice"), () => ran.push("alice"));
      await nextRound();
      // Mallory was first in the rotation, but Alice's unit went: Mallory's waits, keeping its place.
      expect(ran).toEqual(["flood-1", "alice"]);
      expect(turns.waitingOwners).toBe(1);
      clock.spend(SHARE_WINDOW_MS);
      await floodAgain;
      expect(ran).toEqual(["flood-1", "alice", "flood-2"]);
    });

    it("holds no client that is alone: all of the event loop is its own", async () => {
      const clock = fakeClock();
      const turns = new TurnScheduler(2, clock.now);
      const flood = connection("mallory");
      let ran = 0;
      for (let unit = 0; unit < 5; unit++) turns.run(flood, () => (ran++, clock.spend(pastShare)));
      for (let round = 0; round < 5; round++) await nextRound();
      expect(ran).toBe(5);
    });

    it("keeps every unit of a held owner, those queued for it while it was passed over too, for forget() to run", async () => {
      const clock = fakeClock();
      const turns = new TurnScheduler(2, clock.now);
      const flood = connection("mallory");
      const ran: string[] = [];
      turns.run(flood, () => clock.spend(pastShare));
      turns.enqueue(flood, () => ran.push("mallory-1"));
      turns.enqueue(connection("alice"), () => (ran.push("alice"), turns.enqueue(flood, () => ran.push("mallory-2"))));
      await nextRound();
      expect(ran).toEqual(["alice"]);
      turns.forget(flood);
      expect(ran).toEqual(["alice", "mallory-1", "mallory-2"]);
    });

    it("rests a held client until it is within its share or no lighter client is active any more, whichever comes first", () => {
      const clock = fakeClock();
      const shares = new ClientShares(clock.now);
      shares.charge("mallory", 10 * CLIENT_SHARE * SHARE_WINDOW_MS);
      expect(shares.overShare("mallory")).toBe(false);
      shares.touch("alice");
      expect(shares.overShare("mallory")).toBe(true);
      // Its decay alone would take a window times ln 10; Alice stops counting after one window.
      expect(shares.msUntilWithin("mallory")).toBe(SHARE_WINDOW_MS);
      clock.spend(SHARE_WINDOW_MS / 2);
      expect(shares.msUntilWithin("mallory")).toBe(SHARE_WINDOW_MS / 2);
      clock.spend(SHARE_WINDOW_MS / 2);
      expect(shares.overShare("mallory")).toBe(false);
      expect(shares.msUntilWithin("mallory")).toBe(0);
    });

    it("passes over a connection past its share while a lighter connection of the same client is active (no tokens: one client)", async () => {
      const clock = fakeClock();
      const turns = new TurnScheduler(2, clock.now);
      const flood = connection("anonymous");
      const ran: string[] = [];
      turns.run(flood, () => clock.spend(pastShare));
      turns.enqueue(flood, () => ran.push("flood"));
      turns.enqueue(connection("anonymous"), () => ran.push("bystander"));
      await nextRound();
      expect(ran).toEqual(["bystander"]);
      turns.forget(flood);
      expect(ran).toEqual(["bystander", "flood"]);
    });

    it("charges a unit run inside another to its own client, not to the one around it", async () => {
      const clock = fakeClock();
      const turns = new TurnScheduler(2, clock.now);
      const alice = connection("alice");
      const mallory = connection("mallory");
      const ran: string[] = [];
      turns.runCharged(alice, () => turns.runCharged(mallory, () => clock.spend(pastShare)));
      turns.enqueue(mallory, () => ran.push("mallory"));
      turns.enqueue(alice, () => ran.push("alice"));
      await nextRound();
      expect(ran).toEqual(["alice"]);
      turns.forget(mallory);
    });

    it("holds none of several clients all past their shares: the rotation shares the event loop among them", async () => {
      const clock = fakeClock();
      const turns = new TurnScheduler(2, clock.now);
      const mallory = connection("mallory");
      const trudy = connection("trudy");
      const ran: string[] = [];
      turns.run(mallory, () => clock.spend(pastShare));
      turns.enqueue(trudy, () => clock.spend(pastShare));
      await nextRound();
      turns.enqueue(mallory, () => ran.push("mallory"));
      turns.enqueue(trudy, () => ran.push("trudy"));
      await nextRound();
      expect(ran).toEqual(["mallory", "trudy"]);
    });

    it("counts a client's connections and its lifecycle place as one client", async () => {
      const clock = fakeClock();
      const turns = new TurnScheduler(2, clock.now);
      const ran: string[] = [];
      // Past its share on one connection: its other connection and its handshakes wait too.
      turns.run(connection("mallory"), () => clock.spend(pastShare));
      const second = connection("mallory");
      turns.enqueue(second, () => ran.push("mallory's second connection"));
      turns.enqueue(lifecycleOf("mallory"), () => ran.push("mallory's new connection"));
      turns.enqueue(connection("alice"), () => ran.push("alice"));
      await nextRound();
      expect(ran).toEqual(["alice"]);
      expect(turns.waitingOwners).toBe(2);
      turns.forget(second);
      turns.forget(lifecycleOf("mallory"));
    });
  });
});
