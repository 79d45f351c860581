import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The scenarios move one sandbox's clock and pause real processes: one file at a time, so
    // that no other test's load stretches a pause past its bound.
    fileParallelism: false,
    // The scenario runs go three at a time, in the suite's three lanes (test/scenarios.test.ts).
    maxConcurrency: 3,
  },
});
