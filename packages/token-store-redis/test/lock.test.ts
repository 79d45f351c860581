/**
 * The Redis lock against a real redis-server: mutual exclusion, owner-only release, renewal of a
 * long task's lease, the bounded wait, takeover of a dead holder's expired lease, and a lost lease
 * being reported. (Across real processes and `kill -9`: the conformance suite's scenarios on Redis,
 * spec/conformance/.)
 */
import { describe, expect, it, vi } from "vitest";
import { RedisStorageError, redisLock } from "../src/index.js";
import { connect, counting, uniquePrefix } from "./support/helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("redisLock", () => {
  it("runs tasks of one name one at a time, across separate connections", async () => {
    const prefix = uniquePrefix();
    const clients = await Promise.all(Array.from({ length: 6 }, () => connect()));
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      clients.map((client, i) =>
        redisLock(client, { prefix, retryDelayMs: 5, maxRetryDelayMs: 20 })("lock", async () => {
          inside++;
          most = Math.max(most, inside);
          await sleep(30);
          order.push(i);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    // Released after the last task: nothing is left behind.
    expect(await clients[0]!.exists(`${prefix}lock`)).toBe(0);
  });

  it("lets tasks of different names run at the same time", async () => {
    const client = await connect();
    const lock = redisLock(client, { prefix: uniquePrefix() });
    let inside = 0;
    let most = 0;
    const task = async () => {
      most = Math.max(most, ++inside);
      await sleep(50);
      inside--;
    };
    await Promise.all([lock("a", task), lock("b", task)]);
    expect(most).toBe(2);
  });

  it("holds the key with a random owner value and a lease while the task runs", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const seen: (string | null)[] = [];
    const lock = redisLock(client, { prefix, leaseMs: 5_000 });
    await lock("lock", async () => seen.push(await client.get(`${prefix}lock`)));
    await lock("lock", async () => seen.push(await client.get(`${prefix}lock`)));
    expect(seen[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(seen[1]).toMatch(/^[0-9a-f]{32}$/);
    expect(seen[0]).not.toBe(seen[1]);
  });

  it("resolves with the task's result and rejects with the task's own error, releasing in both cases", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const lock = redisLock(client, { prefix });
    await expect(lock("lock", async () => 42)).resolves.toBe(42);
    const failure = new Error("task failed");
    await expect(lock("lock", async () => Promise.reject(failure))).rejects.toBe(failure);
    expect(await client.exists(`${prefix}lock`)).toBe(0);
  });

  it("releases only its own lock: a lease taken over by another owner is left alone", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const key = `${prefix}lock`;
    const lost = vi.fn();
    await redisLock(client, { prefix, onLeaseLost: lost })("lock", async () => {
      // As if the lease had expired and another process had taken the lock meanwhile.
      await client.set(key, "someone-else", { PX: 60_000 });
    });
    expect(await client.get(key)).toBe("someone-else");
    // The default renewal period (a third of 10 s) never ran: the release itself noticed the loss.
    expect(lost).toHaveBeenCalledTimes(1);
    expect(lost.mock.calls[0]![0]).toMatchObject({
      code: "LEASE_LOST",
      message: expect.stringContaining("at release"),
    });
  });

  it("keeps renewing a long task's lease, so others wait instead of taking the lock", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const lost = vi.fn();
    const ttls: number[] = [];
    const other = redisLock(client, { prefix, waitTimeoutMs: 200 });
    await redisLock(client, { prefix, leaseMs: 300, renewEveryMs: 60, onLeaseLost: lost })("lock", async () => {
      // Five leases long: without renewal the key would be gone after 300 ms.
      for (let i = 0; i < 10; i++) {
        await sleep(150);
        ttls.push(await client.pTTL(`${prefix}lock`));
      }
      await expect(other("lock", async () => "taken")).rejects.toMatchObject({ code: "LOCK_TIMEOUT" });
    });
    expect(ttls.every((ttl) => ttl > 0)).toBe(true);
    expect(lost).not.toHaveBeenCalled();
  });

  it("fails a wait that runs out with a typed LOCK_TIMEOUT error naming the key, never the holder's value", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    await client.set(`${prefix}lock`, "holder-secret-value", { PX: 60_000 });
    const task = vi.fn(async () => {});
    const error = await redisLock(client, { prefix, waitTimeoutMs: 300 })("lock", task).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisStorageError);
    expect(error).toMatchObject({ name: "RedisStorageError", code: "LOCK_TIMEOUT" });
    expect((error as Error).message).toContain(`${prefix}lock`);
    expect((error as Error).message).not.toContain("holder-secret-value");
    expect(task).not.toHaveBeenCalled();
    expect(await client.get(`${prefix}lock`)).toBe("holder-secret-value");
  });

  it("takes over the expired lease of a holder that died, without waiting out the whole wait", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    // A holder that took the lock and died: nothing renews or releases it.
    await client.set(`${prefix}lock`, "dead-holder", { PX: 400 });
    const started = performance.now();
    await expect(redisLock(client, { prefix, waitTimeoutMs: 20_000 })("lock", async () => "mine")).resolves.toBe(
      "mine",
    );
    // Well under the 20 s wait: the lease expiry, not the timeout, let it in.
    expect(performance.now() - started).toBeLessThan(15_000);
  });

  it("reports a lease lost under a running task (LEASE_LOST) and lets the task finish", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const lost = vi.fn();
    const result = await redisLock(client, { prefix, leaseMs: 300, renewEveryMs: 50, onLeaseLost: lost })(
      "lock",
      async () => {
        // As if this process had been paused past its lease and another one had taken the lock.
        await client.set(`${prefix}lock`, "new-owner", { PX: 60_000 });
        await sleep(300);
        return "done";
      },
    );
    expect(result).toBe("done");
    expect(lost).toHaveBeenCalledTimes(1);
    expect(lost.mock.calls[0]![0]).toMatchObject({ name: "RedisStorageError", code: "LEASE_LOST" });
    expect(await client.get(`${prefix}lock`)).toBe("new-owner");
  });

  it("reports LEASE_LOST when no renewal succeeds for a whole lease (Redis unreachable)", async () => {
    const real = await connect();
    const prefix = uniquePrefix();
    let down = false;
    const flaky = {
      sendCommand: (args: string[]) => (down ? Promise.reject(new Error("connection lost")) : real.sendCommand(args)),
    };
    const lost = vi.fn();
    await redisLock(flaky, { prefix, leaseMs: 200, renewEveryMs: 40, onLeaseLost: lost })("lock", async () => {
      down = true;
      await sleep(500);
      down = false;
    });
    expect(lost).toHaveBeenCalledTimes(1);
    expect(lost.mock.calls[0]![0]).toMatchObject({
      code: "LEASE_LOST",
      cause: { code: "COMMAND_FAILED", cause: new Error("connection lost") },
    });
  });

  it("survives an onLeaseLost callback that throws (regression: it runs on a timer, where a throw would be an unhandled rejection)", async () => {
    const real = await connect();
    const prefix = uniquePrefix();
    let down = false;
    const flaky = {
      sendCommand: (args: string[]) => (down ? Promise.reject(new Error("connection lost")) : real.sendCommand(args)),
    };
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      const thrower = vi.fn(() => {
        throw new Error("monitoring is down");
      });
      const result = await redisLock(flaky, { prefix, leaseMs: 200, renewEveryMs: 40, onLeaseLost: thrower })(
        "lock",
        async () => {
          down = true;
          await sleep(500);
          down = false;
          return "done";
        },
      );
      await sleep(50);
      expect(result).toBe("done");
      expect(thrower).toHaveBeenCalledTimes(1);
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });

  it("rejects with STORAGE_FAILED (cause LOCK_UNAVAILABLE, the client's error under it) when Redis fails while the lock is taken", async () => {
    const failing = { sendCommand: () => Promise.reject(new Error("The client is closed")) };
    const task = vi.fn(async () => {});
    const error = await redisLock(failing)("tenant-integration:x:lock", task).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "TokenManagerError",
      code: "STORAGE_FAILED",
      message: "STORAGE_FAILED: Redis SET of tenant-integration:{x}:lock failed: the client is closed",
      cause: { name: "RedisStorageError", code: "LOCK_UNAVAILABLE", cause: new Error("The client is closed") },
    });
    expect(task).not.toHaveBeenCalled();
  });

  it("runs its scripts by SHA (EVALSHA) and loads them with EVAL after the script cache was flushed", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const traced = counting(client);
    const lock = redisLock(traced, { prefix });
    await client.scriptFlush();
    await lock("lock", async () => {});
    // The first release meets an empty cache (NOSCRIPT) and falls back to EVAL, which caches it;
    // each release is then announced to the waiters (PUBLISH).
    expect(traced.commands).toEqual(["SET", "EVALSHA", "EVAL", "PUBLISH"]);
    traced.commands.length = 0;
    await lock("lock", async () => {});
    expect(traced.commands).toEqual(["SET", "EVALSHA", "PUBLISH"]);
    expect(await client.exists(`${prefix}lock`)).toBe(0);
  });
});
