import { configDefaults, defineConfig } from "vitest/config";

// `pnpm test:unit` (vitest --mode unit) leaves out the tests that start real processes (the sandbox's
// CLI, Prism, the READMEs' programs; they are the ones that need dist/, see test/global-setup.ts) and
// the README samples' type-check, which compiles with TypeScript for seconds.
const notUnit = [
  "test/cli.test.ts",
  "test/contract.test.ts",
  "test/tenant-state-file.test.ts",
  "test/readme-node-flow.test.ts",
  "test/testing-samples.test.ts",
  "test/samples.test.ts",
];

export default defineConfig(({ mode }) => ({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    exclude: mode === "unit" ? [...configDefaults.exclude, ...notUnit] : configDefaults.exclude,
    globalSetup: mode === "unit" ? [] : ["test/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
}));
