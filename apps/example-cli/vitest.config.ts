import { defineConfig } from "vitest/config";

// The end-to-end tests spawn the built CLI (dist/cli.js): turbo's test task builds it first.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
