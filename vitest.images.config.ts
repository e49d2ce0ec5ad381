import { defineConfig } from "vitest/config";

/**
 * The container image tests (`npm run test:images`): they build images with
 * podman, several minutes each, so they are not part of `npm test`.
 */
export default defineConfig({
  test: {
    include: ["test/images/**/*.image-test.ts"],
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 1_200_000,
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ["default", "./test/helpers/summary-reporter.ts"],
  },
});
