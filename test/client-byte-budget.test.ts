/** The per-client and daemon-wide byte budget (budgets/client-byte-budget.ts), as a pure unit. */
import { describe, expect, it } from "vitest";
import { ClientByteBudget } from "../server/dist/budgets/client-byte-budget.js";
import { DescriptorBudget, descriptorLimits } from "../server/dist/budgets/descriptor-budget.js";

const never = new AbortController().signal;
/** Resolves to true when `promise` settles before everything already queued (microtasks and one macrotask). */
const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe("ClientByteBudget", () => {
  it("holds each client to its cap and the daemon to the total, and lets waiters through as room frees", async () => {
    const budget = new ClientByteBudget(() => ({ total: 100, perClient: 60 }));
    const a1 = await budget.reserve("a", 60, never);
    const a2 = budget.reserve("a", 10, never);
    expect(await settled(a2)).toBe(false);
    const b1 = await budget.reserve("b", 40, never);
    const b2 = budget.reserve("b", 1, never);
    // b is under its own cap, but the daemon is full.
    expect(await settled(b2)).toBe(false);
    a1();
    expect(await settled(a2)).toBe(true);
    expect(await settled(b2)).toBe(true);
    expect(budget.reserved).toBe(51);
    b1();
    (await a2)();
    (await b2)();
    expect(budget.reserved).toBe(0);
  });

  it("gives freed room to clients in turn, so one client's pile of waiters never comes before another's first", async () => {
    const budget = new ClientByteBudget(() => ({ total: 10, perClient: 10 }));
    const holder = await budget.reserve("pile", 10, never);
    const pile = Array.from({ length: 5 }, () => budget.reserve("pile", 10, never));
    const other = budget.reserve("other", 10, never);
    holder();
    expect(await settled(pile[0]!)).toBe(true);
    (await pile[0]!)();
    // The other client waited behind one of the pile's, not behind all five.
    expect(await settled(other)).toBe(true);
    expect(await settled(pile[1]!)).toBe(false);
  });

  it("cuts a reservation larger than a cap to the cap, and lets an abandoned waiter leave the queue", async () => {
    const budget = new ClientByteBudget(() => ({ total: 100, perClient: 50 }));
    const whole = await budget.reserve("a", 1_000, never);
    expect(budget.reserved).toBe(50);
    const leaving = new AbortController();
    const waiter = budget.reserve("a", 10, leaving.signal);
    leaving.abort();
    await expect(waiter).rejects.toMatchObject({ code: -32012 });
    whole();
    expect(budget.reserved).toBe(0);
  });
});

describe("DescriptorBudget", () => {
  it("derives its caps from the process's limit, keeping an eighth (at least 256) back and giving a client a quarter", () => {
    expect(descriptorLimits({ maxDescriptors: 0, maxDescriptorsPerClient: 0 }, 1024)).toEqual({ processLimit: 1024, total: 768, perClient: 192 });
    expect(descriptorLimits({ maxDescriptors: 0, maxDescriptorsPerClient: 0 }, 20_000)).toEqual({ processLimit: 20_000, total: 17_500, perClient: 4_375 });
    expect(descriptorLimits({ maxDescriptors: 500, maxDescriptorsPerClient: 900 }, 20_000)).toEqual({ processLimit: 20_000, total: 500, perClient: 500 });
  });

  it("refuses past the client's cap and past the daemon's, naming which, and takes back what is released once", () => {
    const budget = new DescriptorBudget(() => ({ processLimit: 10, total: 3, perClient: 2 }));
    const releases = [budget.take("a", "file handle"), budget.take("a", "connection")];
    expect(() => budget.take("a", "http request")).toThrow(expect.objectContaining({ code: -32011, data: { limit: "maxDescriptorsPerClient" } }));
    budget.take("b", "connection");
    expect(() => budget.take("b", "file handle")).toThrow(expect.objectContaining({ code: -32011, data: { limit: "maxDescriptors" } }));
    releases[0]!();
    releases[0]!();
    expect(budget.charged).toBe(2);
    expect(budget.chargedTo("a")).toBe(1);
  });
});
