/** ManagedProcess's ordering rules with a fake child, as a pure unit. */
import { describe, expect, it } from "vitest";
import { ManagedProcess, type ProcessEvent } from "../server/dist/process/managed-process.js";

/** A pid above the kernel's limit: the SIGKILL sent to its group at close reaches nobody. */
const NO_SUCH_PID = 2 ** 22 + 1;

const fakeChild = () => ({
  pid: NO_SUCH_PID,
  streams: ["stdout", "stderr"] as const,
  stdinOpen: false,
  stdinQueuedBytes: 0,
  whenStdinBelow: () => Promise.resolve(),
  write() {},
  closeStdin() {},
  resize() {},
  pause() {},
  resume() {},
  limitChunks() {},
});

function track() {
  const events: string[] = [];
  const process = new ManagedProcess("p", false, { retainedBytes: 1024, killGraceMs: 1000 }, (_, event: ProcessEvent) =>
    events.push(`${event.kind}:${event.seq}`),
  );
  return { process, events };
}

describe("ManagedProcess", () => {
  it("closes only once attached when the child reported its exit and end of output before, and sends nothing until announced", () => {
    const { process, events } = track();
    process.childEvents.output("stdout", Buffer.from("x"));
    process.childEvents.exited(0, null);
    process.childEvents.streamEnded("stdout");
    process.childEvents.streamEnded("stderr");
    expect(process.closed).toBe(false);
    process.attach(fakeChild());
    expect(process.closed).toBe(true);
    // Nothing is sent before the start's reply is out.
    expect(events).toEqual([]);
    process.announce();
    expect(events).toEqual(["output:1", "exited:2", "closed:3"]);
  });

  it("waits for every stream of an attached child after an early exit", () => {
    const { process, events } = track();
    process.childEvents.exited(0, null);
    process.attach(fakeChild());
    process.announce();
    process.childEvents.streamEnded("stdout");
    expect(process.closed).toBe(false);
    process.childEvents.streamEnded("stderr");
    expect(events).toEqual(["exited:1", "closed:2"]);
  });

  it("knows a write's retry by its writeId, once the first was taken", () => {
    const { process } = track();
    const written: string[] = [];
    process.attach({ ...fakeChild(), stdinOpen: true, write: (data: Buffer) => written.push(data.toString()) });
    expect(process.isRetry("w-1")).toBe(false);
    expect(process.write(Buffer.from("x"), "w-1")).toBe("accepted");
    expect(process.isRetry("w-1")).toBe(true);
    expect(process.write(Buffer.from("x"), "w-1")).toBe("accepted");
    expect(written).toEqual(["x"]);
    expect(process.isRetry("w-2")).toBe(false);
    expect(process.isRetry(undefined)).toBe(false);
  });
});
