import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // test/fixtures holds a suite that the tests run on Node 24; it is not a test of this folder.
    include: ["test/*.test.ts"],
    testTimeout: 60_000,
  },
});
