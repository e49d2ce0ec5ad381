/**
 * The process host's start slots (host/fair-slots.ts), as a pure unit: work
 * the test finishes by hand, so what is checked is who holds a slot when.
 */
import { describe, expect, it } from "vitest";
import { FairSlots } from "../server/dist/host/fair-slots.js";

/** Work that runs until the test calls `finish(label)`; `running` lists what holds a slot. */
function workbench() {
  const running: string[] = [];
  const finishers = new Map<string, () => void>();
  const work = (label: string) => () =>
    new Promise<string>((resolve) => {
      running.push(label);
      finishers.set(label, () => {
        running.splice(running.indexOf(label), 1);
        resolve(label);
      });
    });
  const settled = () => new Promise((resolve) => setImmediate(resolve));
  return { running, work, settled, finish: async (label: string) => (finishers.get(label)!(), await settled()) };
}

describe("FairSlots", () => {
  it("holds at most its slots, and hands freed ones out in rotation: one per waiting owner, not a burst's whole queue first", async () => {
    const slots = new FairSlots(2);
    const { running, work, settled, finish } = workbench();
    // One owner queues a burst first; another's one job comes after it.
    const burst = Array.from({ length: 5 }, (_, index) => slots.run("burst", work(`burst${index}`)));
    const bystander = slots.run("bystander", work("bystander"));
    await settled();
    expect(running).toEqual(["burst0", "burst1"]);
    // The burst's owner was first in the rotation: it gets one slot, then goes to the back, behind the bystander.
    await finish("burst0");
    expect(running).toEqual(["burst1", "burst2"]);
    await finish("burst1");
    expect(running).toEqual(["burst2", "bystander"]);
    await finish("bystander");
    await expect(bystander).resolves.toBe("bystander");
    expect(running).toEqual(["burst2", "burst3"]);
    for (const label of ["burst2", "burst3", "burst4"]) await finish(label);
    await expect(Promise.all(burst)).resolves.toEqual(["burst0", "burst1", "burst2", "burst3", "burst4"]);
    expect(running).toEqual([]);
  });

  it("gives a slot back when the work fails", async () => {
    const slots = new FairSlots(1);
    await expect(slots.run("a", () => Promise.reject(new Error("spawn failed")))).rejects.toThrow("spawn failed");
    await expect(slots.run("b", () => Promise.resolve("started"))).resolves.toBe("started");
  });
});
