/**
 * What needs no Redis: bad options are refused at once with a typed error, and the error class has
 * the shape every error of the kit has (name, stable code, cause; no value).
 */
import { describe, expect, it, vi } from "vitest";
import { RedisStorageError, redisLock, redisStorage } from "./index.js";

const unused = { sendCommand: vi.fn(async () => null) };

describe("options", () => {
  it.each([
    [{ leaseMs: 0 }],
    [{ leaseMs: Number.NaN }],
    [{ waitTimeoutMs: -1 }],
    [{ renewEveryMs: Number.POSITIVE_INFINITY }],
    [{ retryDelayMs: 0 }],
    [{ maxRetryDelayMs: -5 }],
    [{ leaseMs: 1_000, renewEveryMs: 1_000 }],
  ])("refuses %o with INVALID_OPTIONS before any command", (options) => {
    expect(() => redisLock(unused, options)).toThrow(
      expect.objectContaining({ name: "RedisStorageError", code: "INVALID_OPTIONS" }),
    );
    expect(() => redisStorage(unused, options)).toThrow(RedisStorageError);
    expect(unused.sendCommand).not.toHaveBeenCalled();
  });

  it("accepts the defaults and a renewal shorter than the lease", () => {
    expect(typeof redisLock(unused)).toBe("function");
    expect(typeof redisStorage(unused, { leaseMs: 900, renewEveryMs: 899 }).lock).toBe("function");
  });
});

describe("RedisStorageError", () => {
  it("is an Error with its class name, a stable code prefixed to the message, and the cause", () => {
    const cause = new Error("ECONNREFUSED");
    const error = new RedisStorageError("COMMAND_FAILED", "Redis GET of k failed", cause);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("RedisStorageError");
    expect(error.code).toBe("COMMAND_FAILED");
    expect(error.message).toBe("COMMAND_FAILED: Redis GET of k failed");
    expect(error.cause).toBe(cause);
    expect("cause" in new RedisStorageError("LOCK_TIMEOUT", "x")).toBe(false);
  });
});
