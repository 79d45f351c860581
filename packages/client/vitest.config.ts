import { configDefaults, defineConfig } from "vitest/config";

// `pnpm test:unit` (vitest --mode unit) leaves out the tests that start real processes (Prism) and
// those that compile programs with TypeScript for seconds each (the README samples, the ecosystem's
// programs; vitest's type-check pass below still checks the latter's type assertions).
const notUnit = ["src/contract.test.ts", "src/samples.test.ts", "src/ecosystem-types.test.ts"];

export default defineConfig(({ mode }) => ({
  test: {
    include: ["src/**/*.test.ts"],
    exclude: mode === "unit" ? [...configDefaults.exclude, ...notUnit] : configDefaults.exclude,
    // Type-level assertions (expectTypeOf, @ts-expect-error) live in the files below; vitest checks
    // them as tests. Every other test file is type-checked by `pnpm typecheck` and runs once, so the
    // counts are not doubled by a type-check pass over plain runtime tests.
    typecheck: {
      enabled: true,
      include: ["src/client-types.test.ts", "src/create-tenant-client.test.ts", "src/ecosystem-types.test.ts"],
    },
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
}));
