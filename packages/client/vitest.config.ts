import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Type-level assertions (expectTypeOf, @ts-expect-error) live in the files below; vitest checks
    // them as tests. Every other test file is type-checked by `pnpm typecheck` and runs once, so the
    // counts are not doubled by a type-check pass over plain runtime tests.
    typecheck: { enabled: true, include: ["src/client-types.test.ts", "src/create-tenant-client.test.ts", "src/ecosystem-types.test.ts"] },
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
