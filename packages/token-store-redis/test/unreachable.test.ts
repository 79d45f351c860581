/**
 * Redis that cannot be reached (issue 27), each test on a redis-server of its own: one stopped with
 * SIGSTOP (its connections stay open and nothing answers: a hung server, a lost network) and one
 * killed (connections refused). Every call that needs Redis settles within the documented bound,
 * `commandTimeoutMs` per command, with one typed error at every step (read, lock, write):
 * `STORAGE_FAILED`, its cause saying which command failed and why; fresh tokens held in memory are kept.
 *
 * The bounds asserted here are the promise itself (a wait that never ends is the bug), with a
 * generous margin: they say "settles within the bound", never "is fast".
 */
import { createClient, type RedisClientOptions } from "redis";
import { memoryStorage, type TokenManagerError } from "@tenant-integration/token-manager";
import { describe, expect, it, onTestFinished } from "vitest";
import { redisLock, redisStorage } from "../src/index.js";
import { inProcessSandbox, managerFor, signIn, uniquePrefix } from "./support/helpers.js";
import { startRedisServer, type RunningRedis } from "@tenant-integration/test-support/redis-server";

/** The store's default command timeout: what the README documents. */
const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;
/** Slack for the scheduler and a loaded CI machine: the bound is the promise, not a speed. */
const MARGIN_MS = 3_000;
const TOKENS = "tenant-integration:http://127.0.0.1:4020:fleet-demo:tokens";
/** Its Redis key: the session part in a hash tag. */
const TOKENS_KEY = "tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens";

/** A redis-server of the test's own, killed (SIGKILL also ends a stopped one) when the test ends. */
async function ownServer(): Promise<RunningRedis> {
  const server = await startRedisServer();
  onTestFinished(() => server.kill());
  return server;
}

/** A node-redis client as an app makes one: `createClient({ url, ...options })`, connected. */
async function appClient(server: RunningRedis, options: RedisClientOptions = {}) {
  const client = createClient({ url: server.url, ...options });
  client.on("error", () => {}); // reconnect errors are events; unheard, they would crash the worker
  await client.connect();
  onTestFinished(() => client.destroy());
  return client;
}

/** Stops the server's process: its sockets stay open, nothing answers. Continued when the test ends. */
function hang(server: RunningRedis): void {
  process.kill(server.pid, "SIGSTOP");
  onTestFinished(() => {
    try {
      process.kill(server.pid, "SIGCONT");
    } catch {} // already killed
  });
}

type Settled =
  | { outcome: "resolved"; value: unknown; ms: number }
  | { outcome: "rejected"; error: unknown; ms: number }
  | { outcome: "pending"; ms: number };

/** How `promise` settled, and when; "pending" if it had not after `withinMs`. */
async function settle(promise: Promise<unknown>, withinMs: number): Promise<Settled> {
  const start = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cap = new Promise<"pending">((resolve) => (timer = setTimeout(() => resolve("pending"), withinMs)));
  const outcome = await Promise.race([
    promise.then(
      (value) => ({ outcome: "resolved" as const, value }),
      (error: unknown) => ({ outcome: "rejected" as const, error }),
    ),
    cap,
  ]);
  clearTimeout(timer);
  const ms = Math.round(performance.now() - start);
  return outcome === "pending" ? { outcome, ms } : { ...outcome, ms };
}

/** A manager on `client` signed in while Redis answered, its access token expired (a refresh is due). */
async function signedInAndExpired(
  client: Parameters<typeof redisStorage>[0],
  options: Parameters<typeof redisStorage>[1] = {},
) {
  const sandbox = inProcessSandbox();
  const clock = { offsetMs: 0 };
  const tm = managerFor(redisStorage(client, options), sandbox, clock);
  await signIn(tm, sandbox);
  clock.offsetMs = 16 * 60_000;
  return { tm, sandbox, clock, another: () => managerFor(redisStorage(client, options), sandbox, clock) };
}

describe.each([
  ["default client options", {}],
  ["disableOfflineQueue: true", { disableOfflineQueue: true }],
] as const)("a Redis that stops answering (SIGSTOP), %s", (_, clientOptions) => {
  it("getAccessToken() with a refresh due, and a sign-in, reject with STORAGE_FAILED (cause COMMAND_FAILED) within commandTimeoutMs (default 5 s)", async () => {
    const server = await ownServer();
    const client = await appClient(server, clientOptions);
    const { tm, sandbox, another } = await signedInAndExpired(client);
    hang(server);

    const bound = DEFAULT_COMMAND_TIMEOUT_MS + MARGIN_MS;
    const [refresh, signingIn] = await Promise.all([
      settle(tm.getAccessToken(), bound),
      settle(signIn(another(), sandbox), bound),
    ]);

    // The manager reads the tokens before it takes the lock: that GET is what gets no answer.
    expect(refresh).toMatchObject({
      outcome: "rejected",
      error: {
        name: "TokenManagerError",
        code: "STORAGE_FAILED",
        cause: { name: "RedisStorageError", code: "COMMAND_FAILED" },
      },
    });
    expect(String(((refresh as { error: Error }).error.cause as Error).message)).toMatch(
      /GET of .*:tokens got no answer within 5000 ms/,
    );
    // A sign-in stores its pending record first (SET).
    expect(signingIn).toMatchObject({
      outcome: "rejected",
      error: { code: "STORAGE_FAILED", cause: { code: "COMMAND_FAILED" } },
    });
  });
});

describe("a Redis that stops answering (SIGSTOP)", () => {
  it("the lock rejects with STORAGE_FAILED (cause LOCK_UNAVAILABLE, a TimeoutError under it) within commandTimeoutMs, and never runs the task", async () => {
    const server = await ownServer();
    const client = await appClient(server);
    hang(server);
    let ran = false;
    const taken = await settle(
      redisLock(client, { commandTimeoutMs: 300 })("tenant-integration:x:lock", async () => {
        ran = true;
      }),
      300 + MARGIN_MS,
    );
    expect(taken).toMatchObject({
      outcome: "rejected",
      error: {
        name: "TokenManagerError",
        code: "STORAGE_FAILED",
        message:
          "STORAGE_FAILED: Redis SET of tenant-integration:{x}:lock got no answer within 300 ms (timed out: Redis stopped answering, or could not be reached)",
        cause: { name: "RedisStorageError", code: "LOCK_UNAVAILABLE", cause: { name: "TimeoutError" } },
      },
    });
    expect(ran).toBe(false);
  });

  it("a lock SET answered after its timeout (the server resumed) releases what it took, so nobody waits out the lease (DECISIONS D4)", async () => {
    const server = await ownServer();
    const client = await appClient(server);
    const watcher = await appClient(server);
    const subscriber = await appClient(server);
    const prefix = uniquePrefix();
    // the release is announced, as every release is: a waiter subscribed to it wakes at once
    const announced = new Promise<boolean>((resolve) => {
      void subscriber.subscribe(`${prefix}lock:released`, () => resolve(true));
    });
    await new Promise((r) => setTimeout(r, 100)); // the subscription is confirmed before the server stops
    hang(server);
    const lock = redisLock(client, { prefix, commandTimeoutMs: 300, leaseMs: 60_000 });
    await expect(lock("lock", async () => {})).rejects.toMatchObject({
      code: "STORAGE_FAILED",
      cause: { code: "LOCK_UNAVAILABLE" },
    });
    process.kill(server.pid, "SIGCONT"); // the SET runs now, and takes the lock for a minute
    let held = 1;
    for (let i = 0; i < 100 && held; i++) {
      await new Promise((r) => setTimeout(r, 50));
      held = await watcher.exists(`${prefix}lock`);
    }
    expect(held).toBe(0);
    expect(await Promise.race([announced, new Promise((r) => setTimeout(() => r(false), 5_000))])).toBe(true);
    await expect(lock("lock", async () => "taken")).resolves.toBe("taken");
  });

  it("a wait for a lock another owner holds ends within waitTimeoutMs + commandTimeoutMs when Redis stops answering during it", async () => {
    const server = await ownServer();
    const client = await appClient(server);
    const prefix = uniquePrefix();
    await client.set(`${prefix}lock`, "another-owner", { PX: 60_000 });
    const waiting = settle(
      redisLock(client, { prefix, waitTimeoutMs: 2_000, commandTimeoutMs: 300 })("lock", async () => {}),
      2_000 + 300 + MARGIN_MS,
    );
    await new Promise((r) => setTimeout(r, 200));
    hang(server);
    expect(await waiting).toMatchObject({
      outcome: "rejected",
      error: { code: "STORAGE_FAILED", cause: { code: "LOCK_UNAVAILABLE" } },
    });
  });

  it("get, set and delete reject with COMMAND_FAILED within commandTimeoutMs, naming the key, never the value", async () => {
    const server = await ownServer();
    const client = await appClient(server);
    const storage = redisStorage(client, { commandTimeoutMs: 300 });
    hang(server);
    const results = await Promise.all(
      [storage.get(TOKENS), storage.set(TOKENS, '{"refresh_token":"rt-secret"}'), storage.delete(TOKENS)].map((p) =>
        settle(p, 300 + MARGIN_MS),
      ),
    );
    for (const [i, command] of ["GET", "SET", "DEL"].entries()) {
      expect(results[i]).toMatchObject({
        outcome: "rejected",
        error: {
          name: "RedisStorageError",
          code: "COMMAND_FAILED",
          message: `COMMAND_FAILED: Redis ${command} of ${TOKENS_KEY} got no answer within 300 ms (timed out: Redis stopped answering, or could not be reached)`,
        },
      });
      expect(
        String((results[i] as { error: Error }).error) + JSON.stringify((results[i] as { error: Error }).error),
      ).not.toContain("rt-secret");
    }
  });

  it("a process holding refreshed tokens it could not write keeps handing them out (storage-failed, the lock's STORAGE_FAILED as cause), and writes them once Redis answers again", async () => {
    const server = await ownServer();
    const client = await appClient(server, { disableOfflineQueue: true });
    const sandbox = inProcessSandbox();
    // WAIT 1 on a server without replicas: the tokens are stored but their write is reported failed.
    const tm = managerFor(
      redisStorage(client, { replicas: { count: 1, timeoutMs: 20 }, commandTimeoutMs: 500 }),
      sandbox,
      undefined,
      { pendingStorage: memoryStorage() },
    );
    const reported: TokenManagerError[] = [];
    tm.on("storage-failed", ({ error }) => reported.push(error));
    await expect(signIn(tm, sandbox)).rejects.toMatchObject({ code: "STORAGE_FAILED" });
    await client.del(TOKENS_KEY); // as if the write had been lost: only this process has the tokens now

    hang(server);
    const token = await tm.getAccessToken(); // within a second of the failed write: from memory
    await new Promise((r) => setTimeout(r, 1_100)); // past the one-second pause between two write tries
    const served = await settle(tm.getAccessToken(), 500 + MARGIN_MS);
    expect(served).toMatchObject({ outcome: "resolved", value: token });
    expect(reported.at(-1)).toMatchObject({
      code: "STORAGE_FAILED",
      cause: { code: "STORAGE_FAILED", cause: { name: "RedisStorageError", code: "LOCK_UNAVAILABLE" } },
    });

    process.kill(server.pid, "SIGCONT");
    let stored: string | null = null;
    for (let i = 0; i < 100 && stored === null; i++) {
      expect(await tm.getAccessToken()).toBe(token);
      stored = await client.get(TOKENS_KEY);
      if (stored === null) await new Promise((r) => setTimeout(r, 100));
    }
    expect(JSON.parse(stored ?? "{}")).toMatchObject({ access_token: token });
  });
});

describe("a Redis that refuses connections (killed)", () => {
  it.each([
    ["default client options", {}],
    ["disableOfflineQueue: true", { disableOfflineQueue: true }],
  ] as const)(
    "%s: getAccessToken(), a sign-in and the lock all reject with STORAGE_FAILED (causes COMMAND_FAILED, LOCK_UNAVAILABLE), within commandTimeoutMs",
    async (_, clientOptions) => {
      const server = await ownServer();
      const client = await appClient(server, clientOptions);
      const { tm, sandbox, another } = await signedInAndExpired(client);
      await server.kill();

      const bound = DEFAULT_COMMAND_TIMEOUT_MS + MARGIN_MS;
      const [refresh, signingIn, locked] = await Promise.all([
        settle(tm.getAccessToken(), bound),
        settle(signIn(another(), sandbox), bound),
        settle(
          redisLock(client)("tenant-integration:x:lock", async () => {}),
          bound,
        ),
      ]);
      expect(refresh).toMatchObject({
        outcome: "rejected",
        error: {
          name: "TokenManagerError",
          code: "STORAGE_FAILED",
          cause: { name: "RedisStorageError", code: "COMMAND_FAILED" },
        },
      });
      expect(signingIn).toMatchObject({
        outcome: "rejected",
        error: { code: "STORAGE_FAILED", cause: { code: "COMMAND_FAILED" } },
      });
      expect(locked).toMatchObject({
        outcome: "rejected",
        error: {
          name: "TokenManagerError",
          code: "STORAGE_FAILED",
          cause: { name: "RedisStorageError", code: "LOCK_UNAVAILABLE" },
        },
      });
      if ("disableOfflineQueue" in clientOptions) {
        // Said why, in the message: refused at once (the client offline, or its connection closing), not a silence.
        expect((locked as { error: Error }).error.message).toMatch(
          /^STORAGE_FAILED: Redis SET of tenant-integration:{x}:lock failed: Redis could not be reached \((the client is offline, reconnecting|the connection closed)\)$/,
        );
      }
    },
  );

  it("a write given up on while the client queued it offline is never sent once Redis is back (regression: a stale SET must not land over newer tokens)", async () => {
    const server = await ownServer();
    const client = await appClient(server, { socket: { reconnectStrategy: () => 50 } });
    const storage = redisStorage(client, { commandTimeoutMs: 300 });
    await server.kill();
    const stale = await settle(storage.set(TOKENS, "stale"), 300 + MARGIN_MS);
    expect(stale).toMatchObject({ outcome: "rejected", error: { code: "COMMAND_FAILED" } });

    const again = await startRedisServer({ port: server.port });
    onTestFinished(() => again.kill());
    for (let i = 0; i < 100 && !client.isReady; i++) await new Promise((r) => setTimeout(r, 50));
    expect(client.isReady).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(await client.get(TOKENS_KEY)).toBeNull();
  });
});
