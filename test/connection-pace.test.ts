/**
 * Each client's pace of new connections (auth/connection-pace.ts), as a
 * pure unit with a clock the test moves; the daemon's use of it is in
 * identity.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ConnectionPace } from "../server/dist/auth/connection-pace.js";

describe("ConnectionPace", () => {
  it("lets a second's worth through at once, then gives each later connection its own slot in turn", () => {
    let now = 0;
    const pace = new ConnectionPace(10, () => now);
    const waits = Array.from({ length: 13 }, () => pace.take("mallory"));
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0));
    // One slot every 100 ms: the 11th, 12th and 13th wait 100, 200 and 300 ms.
    expect(waits.slice(10).map(Math.round)).toEqual([100, 200, 300]);
    now += 1_000;
    // A second later, the three promised slots are used and seven more have come.
    expect(Array.from({ length: 8 }, () => Math.round(pace.take("mallory")))).toEqual([0, 0, 0, 0, 0, 0, 0, 100]);
  });

  it("takes back the slot of an upgrade given up while it waited, so a client's debt is only what still waits", () => {
    const now = 0;
    const pace = new ConnectionPace(10, () => now);
    for (let index = 0; index < 10; index++) pace.take("mallory");
    // Three wait for their slots; two of them give up (their sockets close).
    pace.take("mallory");
    pace.take("mallory");
    pace.take("mallory");
    pace.giveBack("mallory");
    pace.giveBack("mallory");
    // The next waits behind the one still waiting, not behind the three.
    expect(Math.round(pace.take("mallory"))).toBe(200);
  });

  it("keeps each client's pace apart: one client's burst never makes another wait", () => {
    const now = 0;
    const pace = new ConnectionPace(1, () => now);
    for (let index = 0; index < 50; index++) pace.take("mallory");
    expect(pace.take("alice")).toBe(0);
    expect(pace.take("mallory")).toBeGreaterThan(40_000);
  });

  it("forgets clients whose buckets have filled again, so many identities over time do not pile up", () => {
    let now = 0;
    const pace = new ConnectionPace(1, () => now);
    for (let client = 0; client < 5_000; client++) pace.take(`client-${client}`);
    now += 10_000;
    pace.take("late");
    expect((pace as unknown as { buckets: Map<string, unknown> }).buckets.size).toBeLessThan(1_100);
  });
});
