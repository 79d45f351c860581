import { configDefaults, defineConfig } from "vitest/config";

// `pnpm test:unit` (vitest --mode unit) leaves out the tests that start real processes (the sandbox
// CLI, worker processes that share a file storage, the README's command-line samples) and the README
// samples' type-check, which compiles with TypeScript for seconds.
const notUnit = [
  "src/**/*.processes.test.ts",
  "src/node/loopback.test.ts",
  "src/consent-sample.test.ts",
  "src/samples.test.ts",
];

export default defineConfig(({ mode }) => ({
  test: {
    include: ["src/**/*.test.ts"],
    exclude: mode === "unit" ? [...configDefaults.exclude, ...notUnit] : configDefaults.exclude,
    // Type-level assertions (expectTypeOf, @ts-expect-error) live in the files below; vitest checks
    // them as tests. Every other test file is type-checked by `pnpm typecheck` and runs once, so the
    // counts are not doubled by a type-check pass over plain runtime tests.
    typecheck: { enabled: true, include: ["src/errors.test.ts", "src/shapes.test.ts"] },
  },
}));
