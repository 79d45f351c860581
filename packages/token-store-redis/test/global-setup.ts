/**
 * One redis-server per test run, on a free loopback port, without persistence; stopped by its pid
 * after the run. Each test file uses its own keys (a random prefix), so files can share it.
 */
import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { startRedisServer } from "@tenant-integration/test-support/redis-server";

declare module "vitest" {
  export interface ProvidedContext {
    /** `redis://127.0.0.1:<port>` of the run's redis-server. */
    redisUrl: string;
  }
}

export default async function setup({ provide }: TestProject): Promise<() => Promise<void>> {
  const redis = await startRedisServer({ command: process.env.REDIS_SERVER_PATH || "redis-server" });
  provide("redisUrl", redis.url);
  return () => redis.stop();
}
