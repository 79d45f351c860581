import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Type-level assertions (expectTypeOf, @ts-expect-error) live in the files below; vitest checks
    // them as tests. Every other test file is type-checked by `pnpm typecheck` and runs once, so the
    // counts are not doubled by a type-check pass over plain runtime tests.
    typecheck: { enabled: true, include: ["src/errors.test.ts", "src/shapes.test.ts"] },
  },
});
