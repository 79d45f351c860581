import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // initdb takes seconds on a loaded 2-core machine; a standby is a second cluster.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
