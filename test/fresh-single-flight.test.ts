/**
 * host/fresh-single-flight.ts (a pure unit): a flood of requests for one key
 * costs at most two at a time, and no caller gets an answer to a request
 * sent before it asked.
 */
import { describe, expect, it } from "vitest";
import { FreshSingleFlight } from "../server/dist/host/fresh-single-flight.js";

/** A fetch whose answers the test releases, each saying which request it was. */
function controlledFetch() {
  const pending: { key: string; resolve: (value: string) => void; reject: (error: Error) => void }[] = [];
  let sent = 0;
  const fetch = (key: string) =>
    new Promise<string>((resolve, reject) => {
      const number = ++sent;
      pending.push({ key, resolve: () => resolve(`${key}#${number}`), reject });
    });
  return { fetch, pending, sentCount: () => sent };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("FreshSingleFlight", () => {
  it("serves callers who arrive while a request is out with one request sent after it", async () => {
    const { fetch, pending, sentCount } = controlledFetch();
    const flights = new FreshSingleFlight<string, string>(fetch);
    const first = flights.run("s");
    const later = Array.from({ length: 100 }, () => flights.run("s"));
    expect(sentCount()).toBe(1);
    pending.shift()!.resolve("");
    expect(await first).toBe("s#1");
    await settled();
    // The 100 share the second request, sent only once the first was answered.
    expect(sentCount()).toBe(2);
    pending.shift()!.resolve("");
    expect(new Set(await Promise.all(later))).toEqual(new Set(["s#2"]));
    // Nothing is out: the next caller sends at once.
    const again = flights.run("s");
    expect(sentCount()).toBe(3);
    pending.shift()!.resolve("");
    expect(await again).toBe("s#3");
  });

  it("keeps keys apart, and passes a failure to the callers of that request only", async () => {
    const { fetch, pending, sentCount } = controlledFetch();
    const flights = new FreshSingleFlight<string, string>(fetch);
    const a = flights.run("a");
    const b = flights.run("b");
    const aLater = flights.run("a");
    expect(sentCount()).toBe(2);
    pending.shift()!.reject(new Error("link closed"));
    await expect(a).rejects.toThrow("link closed");
    pending.shift()!.resolve("");
    expect(await b).toBe("b#2");
    await settled();
    pending.shift()!.resolve("");
    expect(await aLater).toBe("a#3");
  });
});
