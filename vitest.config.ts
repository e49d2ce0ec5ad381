import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // node-pty's native module and process groups are happiest in plain child processes.
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // expect.poll waits for a page or a process to show something: 1 s (vitest's default) was too short
    // for a terminal's output in Chromium while the rest of the suite keeps both cores busy.
    expect: { poll: { timeout: 15_000 } },
    // Tests spawn real processes; two workers keep a 2-core machine responsive.
    maxWorkers: 2,
    reporters: ["default", "./test/helpers/summary-reporter.ts"],
  },
});
