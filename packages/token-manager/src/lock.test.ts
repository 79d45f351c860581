import { describe, expect, it } from "vitest";
import { processLock, webLock, type LockManagerLike } from "./lock.js";
import { deferred } from "./test-support/harness.js";

describe("processLock", () => {
  it("runs tasks of one name one after another, and of different names side by side", async () => {
    const lock = processLock();
    const order: string[] = [];
    const gate = deferred();
    const a = lock("x", async () => {
      order.push("a start");
      await gate.promise;
      order.push("a end");
      return 1;
    });
    const b = lock("x", async () => {
      order.push("b");
      return 2;
    });
    const c = lock("y", async () => {
      order.push("c");
      return 3;
    });
    await c;
    expect(order).toEqual(["a start", "c"]);
    gate.resolve();
    expect(await Promise.all([a, b])).toEqual([1, 2]);
    expect(order).toEqual(["a start", "c", "a end", "b"]);
  });

  it("passes on a rejection to its caller and still runs the next task", async () => {
    const lock = processLock();
    const failed = lock("x", async () => {
      throw new Error("boom");
    });
    await expect(failed).rejects.toThrow("boom");
    await expect(lock("x", async () => "next")).resolves.toBe("next");
  });
});

/** A LockManager whose lock is held by a holder that never lets go, until stolen. */
function orphanedLocks() {
  const requests: { name: string; steal: boolean; timed: boolean }[] = [];
  const locks: LockManagerLike = {
    async request(name, options, task) {
      requests.push({ name, steal: options.steal === true, timed: options.signal !== undefined });
      if (options.steal) return task();
      // The lock is held forever: only the signal can end the wait.
      return new Promise((_, reject) => {
        options.signal?.addEventListener("abort", () => reject(options.signal?.reason));
      });
    },
  };
  return { locks, requests };
}

describe("webLock", () => {
  it("takes the lock with a bounded wait and runs the task", async () => {
    const requests: unknown[] = [];
    const locks: LockManagerLike = {
      request: async (name, options, task) => {
        requests.push({ name, hasSignal: options.signal instanceof AbortSignal });
        return task();
      },
    };
    await expect(webLock(locks)("n", async () => 7)).resolves.toBe(7);
    expect(requests).toEqual([{ name: "n", hasSignal: true }]);
  });

  it("steals the lock when the holder is gone and the bounded wait ends", async () => {
    const { locks, requests } = orphanedLocks();
    await expect(webLock(locks, 5)("n", async () => "stolen")).resolves.toBe("stolen");
    expect(requests).toEqual([
      { name: "n", steal: false, timed: true },
      { name: "n", steal: true, timed: false },
    ]);
  });

  it("does not run the task again when the task itself fails", async () => {
    let runs = 0;
    const locks: LockManagerLike = { request: async (_n, _o, task) => task() };
    const failing = webLock(locks)("n", async () => {
      runs++;
      throw new DOMException("inner", "AbortError");
    });
    await expect(failing).rejects.toThrow("inner");
    expect(runs).toBe(1);
  });
});
