/**
 * The vitest options of an example server app's test (`vitest.config.ts`): every test starts its own
 * sandbox, the app and Chromium, so it is bounded by these timeouts (stopped in `afterEach`), and one
 * file runs at a time. Its own entry point, so that a config file imports neither vitest's runner nor
 * Chromium.
 *
 * @example
 * ```ts
 * import { serverExampleTest } from "@tenant-integration/server-example-testing/vitest-config";
 * import { defineConfig } from "vitest/config";
 *
 * export default defineConfig({ test: serverExampleTest });
 * ```
 */
export const serverExampleTest = {
  include: ["test/**/*.test.ts"],
  testTimeout: 90_000,
  hookTimeout: 60_000,
  fileParallelism: false,
};
