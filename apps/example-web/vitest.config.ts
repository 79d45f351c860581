import { defineConfig } from "vitest/config";

// Browser tests: every test starts its own sandbox, static server and Chromium, so they are
// bounded by these timeouts and stopped in afterEach.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
