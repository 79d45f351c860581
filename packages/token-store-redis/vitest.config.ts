import { configDefaults, defineConfig } from "vitest/config";
import { findRedisServer } from "@tenant-integration/test-support/redis-server";

// The Redis suites need a real redis-server (Debian's `redis-server` package). In CI a missing one
// fails the run; elsewhere those suites are left out with a warning saying how to get one, and the
// unit suites in src/ still run. A missing server is never reported as a pass on it.
function redisServer() {
  const redis = findRedisServer();
  if (!redis) {
    const why = `no runnable ${process.env.REDIS_SERVER_PATH || "redis-server on PATH"} (apt-get install -y redis-server, or set REDIS_SERVER_PATH)`;
    if (process.env.CI === "true") throw new Error(`token-store-redis: required in CI: ${why}`);
    console.warn(`token-store-redis: the Redis suites (test/*.test.ts) are left out: ${why}`);
  }
  return redis;
}

export default defineConfig(({ mode }) => {
  // `pnpm test:unit` (vitest --mode unit) runs the unit suites in src/ only, without a redis-server,
  // and leaves out the README samples' type-check, which compiles with TypeScript for seconds.
  const unit = mode === "unit";
  const redis = unit ? undefined : redisServer();
  return {
    test: {
      include: redis ? ["src/**/*.test.ts", "test/**/*.test.ts"] : ["src/**/*.test.ts"],
      exclude: unit ? [...configDefaults.exclude, "src/samples.test.ts"] : configDefaults.exclude,
      globalSetup: redis ? ["test/global-setup.ts"] : [],
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  };
});
