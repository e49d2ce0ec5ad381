/** A real daemon on 127.0.0.1, port 0, stopped (and its processes killed) after the test. */
import { afterEach } from "vitest";
import { loadConfig, poisonReturnedSlabs, startDaemon, type Config, type Daemon } from "@execmux/server";

// Output read into a slab released too early would be overwritten by the
// next read; poisoned, it shows up as corrupt output in any test that
// checks bytes, even when no later read happened to reuse it.
poisonReturnedSlabs(true);

const running = new Set<Daemon>();

afterEach(async () => {
  await Promise.all([...running].map((daemon) => daemon.close()));
  running.clear();
});

export async function startTestDaemon(overrides: Partial<Config> = {}): Promise<Daemon> {
  const daemon = await launchTestDaemon(overrides);
  running.add(daemon);
  return daemon;
}

/** The same, but the caller closes it: for a daemon shared by a describe block (beforeAll/afterAll). */
export function launchTestDaemon(overrides: Partial<Config> = {}): Promise<Daemon> {
  return startDaemon(loadConfig([], {}, { listen: "ws://127.0.0.1:0", logLevel: "silent", ...overrides }));
}
