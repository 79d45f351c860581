import { defineConfig } from "vitest/config";

// The shared rules' tests run here, once; the client and the token manager test what they build on
// them (their own errors, messages and options).
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
  },
});
