/**
 * The per-command deadline without a server (the fast inner loop): a client whose reply never
 * comes, as from a Redis stopped with its connections open. Against a real stopped redis-server:
 * test/unreachable.test.ts.
 */
import { describe, expect, it, vi } from "vitest";
import { redisLock, redisStorage } from "./index.js";

/** A client that takes every command and never answers, recording the abort signal it was given. */
function silent() {
  const signals: (AbortSignal | undefined)[] = [];
  return {
    signals,
    sendCommand: vi.fn((_args: string[], options?: { abortSignal?: AbortSignal }) => {
      signals.push(options?.abortSignal);
      return new Promise<unknown>(() => {});
    }),
  };
}

describe("a command with no reply", () => {
  it("rejects with COMMAND_FAILED after commandTimeoutMs, a TimeoutError as cause, and aborts the command", async () => {
    const client = silent();
    const error = await redisStorage(client, { commandTimeoutMs: 50 })
      .get("k")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "RedisStorageError",
      code: "COMMAND_FAILED",
      message:
        "COMMAND_FAILED: Redis GET of k got no answer within 50 ms (timed out: Redis stopped answering, or could not be reached)",
      cause: { name: "TimeoutError" },
    });
    expect(client.signals[0]?.aborted).toBe(true);
  });

  it("rejects the lock with STORAGE_FAILED (the code of a failed read or write), cause LOCK_UNAVAILABLE, after commandTimeoutMs, never running the task", async () => {
    const task = vi.fn(async () => {});
    await expect(redisLock(silent(), { commandTimeoutMs: 50 })("lock", task)).rejects.toMatchObject({
      name: "TokenManagerError",
      code: "STORAGE_FAILED",
      message:
        "STORAGE_FAILED: Redis SET of lock got no answer within 50 ms (timed out: Redis stopped answering, or could not be reached)",
      cause: { name: "RedisStorageError", code: "LOCK_UNAVAILABLE" },
    });
    expect(task).not.toHaveBeenCalled();
  });

  it("gives WAIT its own replicas.timeoutMs on top of commandTimeoutMs (the server holds WAIT's reply that long)", async () => {
    let waitSignal: AbortSignal | undefined;
    const client = {
      sendCommand: (args: string[], options?: { abortSignal?: AbortSignal }) => {
        if (args[0] !== "WAIT") return Promise.resolve("OK");
        waitSignal = options?.abortSignal;
        return new Promise((resolve) => setTimeout(() => resolve(1), 120));
      },
    };
    await expect(
      redisStorage(client, { commandTimeoutMs: 50, replicas: { count: 1, timeoutMs: 100 } }).set("k", "v"),
    ).resolves.toBeUndefined();
    expect(waitSignal?.aborted).toBe(false);
  });

  it("refuses a commandTimeoutMs that is not a finite number > 0 (INVALID_OPTIONS)", () => {
    for (const commandTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => redisStorage(silent(), { commandTimeoutMs })).toThrow(
        expect.objectContaining({ code: "INVALID_OPTIONS" }),
      );
    }
  });
});
