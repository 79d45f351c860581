/**
 * The PostgreSQL lock against a real server, within one test process (across real processes, paused
 * and killed: test/processes.test.ts): mutual exclusion across pools, the bounded wait naming the
 * holder, the `until` check between slices, a release waking a waiter at once, a lock the server
 * releases when its connection closes, the connections a process's locks may hold, a standby refused.
 */
import type pg from "pg";
import { TokenManagerError } from "@tenant-integration/token-manager";
import { describe, expect, it, vi } from "vitest";
import { PostgresStorageError, postgresLock, postgresStorage } from "../src/index.js";
import { newTable, openPool, sleep, TENANT } from "./support/helpers.js";

/** A lock name no other test uses. */
const lockName = () => `tenant-integration:http://127.0.0.1:4020:fleet-demo:${crypto.randomUUID()}:lock`;

/** The server processes holding the advisory lock of `name`. */
async function holders(pool: pg.Pool, name: string): Promise<number[]> {
  const { rows } = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' AND granted AND objsubid = 1
       AND classid::bigint = (hashtextextended($1, 0) >> 32) & 4294967295
       AND objid::bigint = hashtextextended($1, 0) & 4294967295`,
    [name],
  );
  return rows.map((r) => r.pid);
}

describe("postgresLock", () => {
  it("runs tasks of one name one at a time, across pools of their own", async () => {
    const name = lockName();
    let inside = 0;
    let most = 0;
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        postgresLock(openPool({ max: 2 }))(name, async () => {
          most = Math.max(most, ++inside);
          await sleep(30);
          done.push(i);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(done.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(await holders(openPool(), name)).toEqual([]);
  });

  it("lets tasks of different names (different sessions) run at the same time", async () => {
    const lock = postgresLock(openPool());
    let inside = 0;
    let most = 0;
    const task = async () => {
      most = Math.max(most, ++inside);
      await sleep(100);
      inside--;
    };
    await Promise.all([lock(lockName(), task), lock(lockName(), task)]);
    expect(most).toBe(2);
  });

  it("resolves with the task's result and rejects with its error, releasing the lock and the connection either way", async () => {
    const pool = openPool({ max: 3 });
    const lock = postgresLock(pool);
    const name = lockName();
    await expect(lock(name, async () => 42)).resolves.toBe(42);
    const failure = new Error("task failed");
    await expect(lock(name, async () => Promise.reject(failure))).rejects.toBe(failure);
    expect(await holders(pool, name)).toEqual([]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });

  it("fails a wait that runs out with LOCK_TIMEOUT naming the holder's server process, and never runs the task", async () => {
    const pool = openPool();
    const name = lockName();
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const holding = postgresLock(pool)(name, () => held);
    while ((await holders(pool, name)).length === 0) await sleep(10);
    const [pid] = await holders(pool, name);
    const task = vi.fn(async () => {});
    const error = await postgresLock(openPool(), { waitTimeoutMs: 600 })(name, task).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PostgresStorageError);
    expect(error).toMatchObject({
      code: "LOCK_TIMEOUT",
      message: expect.stringMatching(
        new RegExp(`^LOCK_TIMEOUT: the lock ${name} .* was still held by the server process ${pid}, .* after 600 ms$`),
      ),
    });
    expect(task).not.toHaveBeenCalled();
    release();
    await holding;
  });

  it("asks `until` between the wait's slices, and ends the wait without the lock when it says so", async () => {
    const pool = openPool();
    const name = lockName();
    let release = () => {};
    const holding = postgresLock(pool)(name, () => new Promise<void>((resolve) => (release = resolve)));
    while ((await holders(pool, name)).length === 0) await sleep(10);
    let asked = 0;
    const until = vi.fn(async () => ++asked === 3);
    const task = vi.fn(async () => {});
    const error = await postgresLock(openPool(), { waitSliceMs: 50 })(name, task, { until }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "LOCK_WAIT_ENDED" });
    expect(until).toHaveBeenCalledTimes(3);
    expect(task).not.toHaveBeenCalled();
    release();
    await holding;
  });

  it("is granted to a waiter as soon as the holder lets go, not at the end of the waiter's slice", async () => {
    const pool = openPool();
    const name = lockName();
    let release = () => {};
    const holding = postgresLock(pool)(name, () => new Promise<void>((resolve) => (release = resolve)));
    while ((await holders(pool, name)).length === 0) await sleep(10);
    // One slice of 30 s: only a release the server tells the waiter of can end it sooner.
    const waiting = postgresLock(openPool(), { waitSliceMs: 30_000 })(name, async () => performance.now());
    await sleep(300);
    const released = performance.now();
    release();
    await holding;
    expect((await waiting) - released).toBeLessThan(10_000);
  });

  it("wakes every waiter at the release to ask `until`, so none queues for the lock once the tokens are fresh", async () => {
    const pool = openPool();
    const name = lockName();
    let release = () => {};
    let fresh = false;
    const holding = postgresLock(pool)(name, () => new Promise<void>((resolve) => (release = resolve)));
    while ((await holders(pool, name)).length === 0) await sleep(10);
    // Slices of 30 s: only the release can wake them. The holder stores fresh tokens, then lets go.
    const task = vi.fn(async () => {});
    const waiters = Array.from({ length: 5 }, () =>
      postgresLock(openPool(), { waitSliceMs: 30_000 })(name, task, { until: async () => fresh }).catch(
        (e: unknown) => e,
      ),
    );
    await sleep(500);
    fresh = true;
    release();
    await holding;
    // Were they queued for the lock itself, the server would grant it to one after another, and each
    // would run its task (a read under the lock) before the next: a convoy as long as the fleet.
    expect(await Promise.all(waiters)).toEqual(waiters.map(() => expect.objectContaining({ code: "LOCK_WAIT_ENDED" })));
    expect(task).not.toHaveBeenCalled();
  });

  it("is released by the server the moment its connection closes: a waiter gets it, the holder learns it lost it", async () => {
    const pool = openPool();
    const name = lockName();
    let seen: boolean | undefined;
    let check = async () => {};
    let finish = () => {};
    const holding = postgresLock(pool)(
      name,
      (held) =>
        new Promise<void>((resolve) => {
          check = async () => {
            seen = await held!.isHeld();
          };
          finish = resolve;
        }),
    );
    while ((await holders(pool, name)).length === 0) await sleep(10);
    await check();
    expect(seen).toBe(true);
    const [backend] = await holders(pool, name);
    const waiting = postgresLock(openPool(), { waitTimeoutMs: 20_000 })(name, async () => "mine");
    await pool.query("SELECT pg_terminate_backend($1)", [backend]);
    await expect(waiting).resolves.toBe("mine");
    await check();
    expect(seen).toBe(false);
    finish();
    await holding;
  });

  it("keeps a holder that is slow but alive: a waiter times out, the holder still holds it", async () => {
    const pool = openPool();
    const name = lockName();
    const results = await Promise.all([
      postgresLock(pool)(name, async (held) => {
        await sleep(1_500);
        return held!.isHeld();
      }),
      sleep(100).then(() =>
        postgresLock(openPool(), { waitTimeoutMs: 700 })(name, async () => "taken").catch(
          (e: PostgresStorageError) => e.code,
        ),
      ),
    ]);
    expect(results).toEqual([true, "LOCK_TIMEOUT"]);
  });

  it("leaves a pool's last connection to the writes: a pool of 2 runs 3 refreshes of 3 sessions, none waiting forever", async () => {
    const pool = openPool({ max: 2 });
    const table = await newTable(openPool());
    const storage = postgresStorage(pool, { ...TENANT, table });
    const order: string[] = [];
    await Promise.all(
      ["41", "42", "43"].map((session) =>
        storage.lock(`tenant-integration:http://127.0.0.1:4020:fleet-demo:${session}:lock`, async () => {
          order.push(`in ${session}`);
          // Under the lock, the tokens are written on another connection of the same pool.
          await storage.set(`tenant-integration:http://127.0.0.1:4020:fleet-demo:${session}:tokens`, session);
          await sleep(50);
          order.push(`out ${session}`);
        }),
      ),
    );
    // One lock connection at a time (the pool's max less one): each refresh ran alone.
    expect(order).toEqual(["in 41", "out 41", "in 42", "out 42", "in 43", "out 43"]);
    expect(await storage.get("tenant-integration:http://127.0.0.1:4020:fleet-demo:43:tokens")).toBe("43");
  });

  it("sets the server's TCP keepalives on the lock's connection for its transaction, so a vanished holder is found dead", async () => {
    const pool = openPool();
    let client: pg.PoolClient | undefined;
    const capturing = {
      options: pool.options,
      connect: async () => (client = await pool.connect()),
    };
    const settings = await postgresLock(capturing, { keepalives: { idleSeconds: 7, intervalSeconds: 3, count: 4 } })(
      lockName(),
      async () =>
        (
          await client!.query(
            "SELECT current_setting('tcp_keepalives_idle') AS idle, current_setting('tcp_keepalives_interval') AS interval, current_setting('tcp_keepalives_count') AS count",
          )
        ).rows[0],
    );
    expect(settings).toEqual({ idle: "7", interval: "3", count: "4" });
  });

  it("refuses to lock on a read-only server with STORAGE_FAILED, cause READ_ONLY: a lock there would coordinate nobody", async () => {
    const readOnly = openPool({ options: "-c default_transaction_read_only=on" });
    const task = vi.fn(async () => {});
    const error = await postgresLock(readOnly)(lockName(), task).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenManagerError);
    expect(error).toMatchObject({
      code: "STORAGE_FAILED",
      message: expect.stringContaining("a lock there would coordinate nobody"),
      cause: { name: "PostgresStorageError", code: "READ_ONLY" },
    });
    expect(task).not.toHaveBeenCalled();
  });
});
