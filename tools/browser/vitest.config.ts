import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Launching Chromium takes a few seconds on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
