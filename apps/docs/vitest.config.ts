import { defineConfig } from "vitest/config";

// Most of the docs' tests build the site, open it in Chromium or run the samples against a sandbox.
// `pnpm test:unit` (vitest --mode unit) runs only these, which read files.
const unitTests = [
  "test/statements.test.ts",
  "test/readme-claims.test.ts",
  "test/guides.test.ts",
  "test/changelog.test.ts",
  "test/code-map.test.ts",
];

export default defineConfig(({ mode }) => ({
  test: {
    include: mode === "unit" ? unitTests : ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
}));
