/**
 * redisStorage against a real redis-server, alone and under the token manager: the key layout,
 * get/set/delete, errors that name keys and never values, replica acknowledgement, the fresh-token
 * path staying off Redis, a Redis restart without persistence, and Redis down while a process holds
 * tokens it could not write.
 */
import { createClient } from "redis";
import { logSessionTo, memoryStorage, TokenManagerError } from "@tenant-integration/token-manager";
import { describe, expect, it, onTestFinished } from "vitest";
import { RedisStorageError, redisStorage } from "../src/index.js";
import { connect, counting, inProcessSandbox, managerFor, signIn, uniquePrefix } from "./support/helpers.js";
import { startRedisServer } from "@tenant-integration/test-support/redis-server";

describe("redisStorage", () => {
  it("stores values as strings under prefix + key, reads them back and deletes them", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const storage = redisStorage(client, { prefix });
    const key = "tenant-integration:https://acme.tenant.test:demo:tokens";
    expect(await storage.get(key)).toBeNull();
    await storage.set(key, '{"a":1}');
    // Acknowledged by Redis before set resolved: another connection sees it at once.
    const other = await connect();
    // The session part in a hash tag (issue 31): the Redis key of the manager's name.
    const redisKey = `${prefix}tenant-integration:{https://acme.tenant.test:demo}:tokens`;
    expect(await other.get(redisKey)).toBe('{"a":1}');
    expect(await other.pTTL(redisKey)).toBe(-1); // no expiry
    expect(await storage.get(key)).toBe('{"a":1}');
    await storage.delete(key);
    await storage.delete(key); // absent: still resolves
    expect(await storage.get(key)).toBeNull();
  });

  it("keeps the token manager's keys, named by tenant origin and client id in one hash tag, after the prefix", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const sandbox = inProcessSandbox();
    const tm = managerFor(redisStorage(client, { prefix }), sandbox);
    await signIn(tm, sandbox);
    expect((await client.keys(`${prefix}*`)).sort()).toEqual([
      `${prefix}tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens`,
    ]);
  });

  it("carries its lock, which the token manager uses (SET NX on the :lock key around a refresh)", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const traced = counting(client);
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    const tm = managerFor(redisStorage(traced, { prefix }), sandbox, clock);
    await signIn(tm, sandbox);
    const locked: string[] = [];
    const spy = {
      sendCommand: (args: string[]) => (
        args[0] === "SET" && args.includes("NX") && locked.push(args[1]!), traced.sendCommand(args)
      ),
    };
    const tm2 = managerFor(redisStorage(spy, { prefix }), sandbox, clock);
    clock.offsetMs = 16 * 60_000;
    await tm2.getAccessToken();
    expect(locked).toEqual([`${prefix}tenant-integration:{http://127.0.0.1:4020:fleet-demo}:lock`]);
  });

  it("never goes to Redis on the fresh-token path: the manager answers from memory", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const sandbox = inProcessSandbox();
    const tm = managerFor(redisStorage(client, { prefix }), sandbox);
    await signIn(tm, sandbox);

    // A second manager (another process, in effect) reads the record once, without the lock: a fresh
    // record another process wrote needs none ...
    const traced = counting(client);
    const other = managerFor(redisStorage(traced, { prefix }), sandbox);
    const token = await other.getAccessToken();
    expect(traced.commands).toEqual(["GET"]);
    // ... and then never again while the token is fresh.
    traced.commands.length = 0;
    for (let i = 0; i < 1_000; i++) expect(await other.getAccessToken()).toBe(token);
    expect(traced.commands).toEqual([]);
  });

  it("uses only SET, GET, GETDEL, DEL, EVALSHA, EVAL, PUBLISH (and WAIT with replicas) over a whole session: the commands Valkey shares", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const traced = counting(client);
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    const storage = redisStorage(traced, { prefix, replicas: { count: 0, timeoutMs: 100 } });
    await client.scriptFlush(); // so that the EVAL fallback runs too
    const a = managerFor(storage, sandbox, clock);
    const b = managerFor(redisStorage(traced, { prefix }), sandbox, clock);
    await signIn(a, sandbox);
    await b.getAccessToken();
    clock.offsetMs = 16 * 60_000;
    // Both expired at once: they contend for the lock, one refreshes.
    const [ta, tb] = await Promise.all([a.getAccessToken(), b.getAccessToken()]);
    expect(ta).toBe(tb);
    await a.revoke();
    await b.signOut();
    expect(new Set(traced.commands)).toEqual(
      new Set(["SET", "GET", "GETDEL", "DEL", "EVALSHA", "EVAL", "PUBLISH", "WAIT"]),
    );
  });

  it("rejects a failed command with COMMAND_FAILED naming the key, never the value; the manager reports STORAGE_FAILED", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const key = "tenant-integration:http://127.0.0.1:4020:fleet-demo:tokens";
    const redisKey = `${prefix}tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens`;
    // A key of another type: Redis answers WRONGTYPE to GET.
    await client.hSet(redisKey, "field", "x");
    const storage = redisStorage(client, { prefix });
    const error = await storage.get(key).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "RedisStorageError",
      code: "COMMAND_FAILED",
      message: `COMMAND_FAILED: Redis GET of ${redisKey} failed: the key holds a value of another Redis type, which this kit did not write (another application's data?); it is left as it is (WRONGTYPE)`,
    });
    expect(String((error as Error).cause)).toMatch(/WRONGTYPE/);

    const stopped = redisStorage({ sendCommand: () => Promise.reject(new Error("The client is closed")) }, { prefix });
    const setError = await stopped.set(key, '{"refresh_token":"rt-secret"}').catch((e: unknown) => e);
    expect(setError).toMatchObject({ code: "COMMAND_FAILED" });
    expect(JSON.stringify(setError) + String(setError) + String((setError as Error).cause)).not.toContain("rt-secret");

    const sandbox = inProcessSandbox();
    const tm = managerFor(storage, sandbox);
    const managerError = await tm.getAccessToken().catch((e: unknown) => e);
    expect(managerError).toBeInstanceOf(TokenManagerError);
    expect(managerError).toMatchObject({ code: "STORAGE_FAILED" });
  });

  it("waits for replicas when asked (WAIT), and rejects with REPLICATION_TIMEOUT when too few acknowledge", async () => {
    const client = await connect();
    const prefix = uniquePrefix();
    const traced = counting(client);
    // This server has no replica: WAIT 0 is met at once, WAIT 1 runs out.
    await redisStorage(traced, { prefix, replicas: { count: 0, timeoutMs: 100 } }).set("k", "v");
    expect(traced.commands).toEqual(["SET", "WAIT"]);
    const error = await redisStorage(client, { prefix, replicas: { count: 1, timeoutMs: 50 } })
      .set("k", "v2")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "RedisStorageError", code: "REPLICATION_TIMEOUT" });
    expect((error as Error).message).not.toContain("v2");
  });

  it("refuses bad replica options at once (INVALID_OPTIONS)", async () => {
    const client = await connect();
    expect(() => redisStorage(client, { replicas: { count: 1, timeoutMs: 0 } })).toThrow(RedisStorageError);
    expect(() => redisStorage(client, { replicas: { count: -1, timeoutMs: 10 } })).toThrow(/INVALID_OPTIONS/);
  });

  it("after a Redis restart without persistence, the session is gone: NOT_SIGNED_IN, no refresh sent", async () => {
    const first = await startRedisServer();
    onTestFinished(() => first.stop());
    const client = createClient({ url: first.url, socket: { reconnectStrategy: () => 50 } });
    client.on("error", () => {});
    await client.connect();
    onTestFinished(() => client.destroy());
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    await signIn(managerFor(redisStorage(client), sandbox, clock), sandbox);

    await first.stop();
    const second = await startRedisServer({ port: first.port });
    onTestFinished(() => second.stop());
    // A process that starts now (or whose token expired) finds nothing: the tokens were only in memory.
    clock.offsetMs = 16 * 60_000;
    const fresh = managerFor(redisStorage(client), sandbox, clock);
    const before = sandbox.sandbox.events().length;
    let error: unknown;
    for (let i = 0; i < 100; i++) {
      error = await fresh.getAccessToken().catch((e: unknown) => e);
      if ((error as TokenManagerError).code !== "STORAGE_FAILED") break; // still reconnecting
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(error).toMatchObject({ code: "NOT_SIGNED_IN" });
    expect(sandbox.sandbox.events().length).toBe(before);
  });

  it("while Redis is down, the process holding tokens it could not write keeps using them, and writes them back once Redis is up", async () => {
    const server = await startRedisServer();
    onTestFinished(() => server.stop());
    // As the README advises: a command sent while Redis is unreachable fails at once.
    const client = createClient({
      url: server.url,
      disableOfflineQueue: true,
      socket: { reconnectStrategy: () => 50 },
    });
    client.on("error", () => {});
    await client.connect();
    onTestFinished(() => client.destroy());
    const sandbox = inProcessSandbox();
    // WAIT 1 on a server without replicas: every token write is stored but reported failed.
    const storage = redisStorage(client, { replicas: { count: 1, timeoutMs: 20 } });
    const tm = managerFor(storage, sandbox, undefined, { pendingStorage: memoryStorage() });
    const reported: TokenManagerError[] = [];
    tm.on("storage-failed", ({ error }) => reported.push(error));
    await expect(signIn(tm, sandbox)).rejects.toMatchObject({ code: "STORAGE_FAILED" });

    await server.stop();
    const token = await tm.getAccessToken();
    // Within a second of that failed try, the tokens are served with no new try (and no new report).
    expect(await tm.getAccessToken()).toBe(token);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({
      code: "STORAGE_FAILED",
      cause: { code: "STORAGE_FAILED", cause: { name: "RedisStorageError", code: "LOCK_UNAVAILABLE" } },
    });

    // Back, and empty (no persistence): a later call writes the tokens again, for every process.
    const again = await startRedisServer({ port: server.port });
    onTestFinished(() => again.stop());
    let stored: string | null = null;
    for (let i = 0; i < 100 && stored === null; i++) {
      expect(await tm.getAccessToken()).toBe(token);
      stored = await client.get("tenant-integration:{http://127.0.0.1:4020:fleet-demo}:tokens").catch(() => null);
      if (stored === null) await new Promise((r) => setTimeout(r, 50));
    }
    const anotherProcess = managerFor(redisStorage(client), sandbox);
    const before = sandbox.sandbox.events().length;
    expect(await anotherProcess.getAccessToken()).toBe(token);
    expect(sandbox.sandbox.events().length).toBe(before);
  });
});

describe("values under the session's keys that the kit did not write (DECISIONS D2, D3)", () => {
  const SESSION = "tenant-integration:{http://127.0.0.1:4020:fleet-demo}";

  /** A signed-in manager on a fresh prefix whose token has expired, with its warnings recorded. */
  async function expiredSession() {
    const client = await connect();
    const prefix = uniquePrefix();
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    const warnings: string[] = [];
    const logger = logSessionTo({ warn: (_fields: unknown, message: string) => void warnings.push(message) }, "warn");
    const tm = managerFor(redisStorage(client, { prefix }), sandbox, clock, { logger });
    await signIn(tm, sandbox);
    clock.offsetMs += 16 * 60_000;
    const refreshes = () => sandbox.sandbox.events().filter((e) => e.grantType === "refresh_token").length;
    return { client, tm, clock, warnings, refreshes, key: (kind: string) => `${prefix}${SESSION}:${kind}` };
  }

  it("a value of another Redis type under the intent key fails the refresh with STORAGE_FAILED naming the key, sends nothing, and is left as it is", async () => {
    const { client, tm, refreshes, key } = await expiredSession();
    await client.hSet(key("intent"), "owner", "another application");
    const error = await tm.getAccessToken().catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "TokenManagerError",
      code: "STORAGE_FAILED",
      cause: {
        code: "COMMAND_FAILED",
        message: `COMMAND_FAILED: Redis GET of ${key("intent")} failed: the key holds a value of another Redis type, which this kit did not write (another application's data?); it is left as it is (WRONGTYPE)`,
      },
    });
    expect(refreshes()).toBe(0);
    expect(await client.hGetAll(key("intent"))).toEqual({ owner: "another application" });
  });

  it("a string under the intent key that is not an intent record reads as absent: warned about once, naming the Redis key, and replaced by the next intent", async () => {
    const { client, tm, clock, warnings, refreshes, key } = await expiredSession();
    await client.set(key("intent"), "not an intent record");
    expect(await tm.getAccessToken()).toEqual(expect.any(String));
    expect(refreshes()).toBe(1);
    // this refresh's intent replaced it, and was removed once its tokens were stored
    expect(await client.get(key("intent"))).toBeNull();
    await client.set(key("intent"), "not an intent record");
    clock.offsetMs += 16 * 60_000;
    await tm.getAccessToken();
    expect(refreshes()).toBe(2);
    expect(warnings).toEqual([
      `The value under ${key("intent")} is not a refresh intent record (this kit did not write it); it reads as no intent, and the next refresh intent replaces it`,
    ]);
  });

  it("a value under the tokens key that is not a token record is reported by its Redis key, hash tag included", async () => {
    const { client, tm, key } = await expiredSession();
    await client.set(key("tokens"), '{"not":"a token record"}');
    await expect(tm.getAccessToken()).rejects.toMatchObject({
      code: "NOT_SIGNED_IN",
      message: `NOT_SIGNED_IN: the stored tokens are unreadable: the value under ${key("tokens")} is not a token record; signing in replaces it`,
    });
  });
});
