import { configDefaults, defineConfig } from "vitest/config";

// The end-to-end tests spawn the built CLI (dist/cli.js): turbo's test task builds it first.
export default defineConfig(({ mode }) => ({
  test: {
    include: ["test/**/*.test.ts"],
    // `pnpm test:unit` (vitest --mode unit) leaves out the end-to-end tests.
    exclude: mode === "unit" ? [...configDefaults.exclude, "test/**/*.e2e.test.ts"] : configDefaults.exclude,
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
}));
