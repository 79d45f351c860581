import { configDefaults, defineConfig } from "vitest/config";

// `pnpm test:unit` (vitest --mode unit) leaves out the tests that start real processes: Prism,
// Redocly's CLI, optic.
const notUnit = ["test/prism-mock.test.ts", "test/lint-catches.test.ts", "test/breaking-changes.test.ts"];

export default defineConfig(({ mode }) => ({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: mode === "unit" ? [...configDefaults.exclude, ...notUnit] : configDefaults.exclude,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
}));
