import { defineConfig } from "vitest/config";

// Browser tests: every test starts its own sandbox, this app and Chromium, so they are bounded by
// these timeouts and stopped in afterEach.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 90_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
