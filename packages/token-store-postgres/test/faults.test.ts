/**
 * Faults of PostgreSQL under the token manager, each a typed error saying why, nothing lost, the
 * session kept where the other storages keep it: the server killed (connections refused), hung
 * (SIGSTOP: connections open, nothing answers), restarted, a statement cancelled by
 * `statement_timeout`, a hot standby or a read-only server given as the primary, the lock's
 * connection dropped mid-refresh. This file starts a server of its own, since it stops and restarts it.
 */
import type pg from "pg";
import { startPostgres, type RunningPostgres } from "@tenant-integration/postgres-testing";
import { TokenManagerError } from "@tenant-integration/token-manager";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureSchema, postgresStorage, type PostgresStorageOptions } from "../src/index.js";
import {
  EXPIRED_MS,
  inProcessSandbox,
  managerFor,
  openPool,
  signIn,
  sleep,
  TENANT,
  uniqueTable,
} from "./support/helpers.js";

const NAME = "tenant-integration:http://127.0.0.1:4020:fleet-demo";

let server: RunningPostgres;

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(() => server?.close());

/** A pool on this file's server, a new table on it, and a storage with `options`. */
async function setUp(options: Partial<PostgresStorageOptions> = {}, config: pg.PoolConfig = {}) {
  const pool = openPool(config, server.url);
  const table = uniqueTable();
  await ensureSchema(openPool({}, server.url), { table });
  return { pool, table, storage: postgresStorage(pool, { ...TENANT, table, ...options }) };
}

/** A manager signed in on `storage`, its clock, and the sandbox. */
async function signedIn(storage: ReturnType<typeof postgresStorage>) {
  const sandbox = inProcessSandbox();
  const clock = { offsetMs: 0 };
  const tm = managerFor(storage, sandbox, clock);
  await signIn(tm, sandbox);
  return { tm, sandbox, clock };
}

/** The tokens record stored in `table`. */
async function stored(table: string): Promise<{ access_token: string; refresh_token: string }> {
  const { rows } = await openPool({}, server.url).query(`SELECT value FROM ${table} WHERE kind = 'tokens'`);
  return JSON.parse(rows[0].value);
}
const storedRefreshToken = async (table: string) => (await stored(table)).refresh_token;
const storedAccessToken = async (table: string) => (await stored(table)).access_token;

const refreshes = (sandbox: ReturnType<typeof inProcessSandbox>) =>
  sandbox.sandbox.events().filter((e) => e.grantType === "refresh_token").length;

describe("PostgreSQL faults", () => {
  it("killed: STORAGE_FAILED saying it could not be reached, at once; fresh tokens still served; all back once it is", async () => {
    const { pool, storage, table } = await setUp();
    const { tm, sandbox, clock } = await signedIn(storage);
    const token = await tm.getAccessToken();
    const before = await storedRefreshToken(table);
    await server.kill();
    // The pool drops its idle connections once it reads their close; a query sent before that (on a
    // loaded machine, the kill and the next call can come first) fails as "the connection was lost".
    while (pool.idleCount > 0) await sleep(10);
    try {
      expect(await tm.getAccessToken()).toBe(token); // fresh, from memory
      clock.offsetMs = EXPIRED_MS;
      const error = await tm.getAccessToken().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TokenManagerError);
      expect(error).toMatchObject({
        code: "STORAGE_FAILED",
        cause: {
          code: "COMMAND_FAILED",
          message: expect.stringContaining("PostgreSQL could not be reached (connection refused)"),
        },
      });
      const lockError = await storage.lock(`${NAME}:lock`, async () => "ran").catch((e: unknown) => e);
      expect(lockError).toMatchObject({ code: "STORAGE_FAILED", cause: { code: "LOCK_UNAVAILABLE" } });
      expect(refreshes(sandbox)).toBe(0);
    } finally {
      await server.start();
    }
    expect(await tm.getAccessToken()).not.toBe(token);
    expect(refreshes(sandbox)).toBe(1);
    expect(await storedRefreshToken(table)).not.toBe(before);
  });

  it("hung (SIGSTOP): every call fails within commandTimeoutMs with STORAGE_FAILED, none hangs, nothing is sent; the session goes on after", async () => {
    const { storage } = await setUp({ commandTimeoutMs: 500 });
    const { tm, sandbox, clock } = await signedIn(storage);
    const token = await tm.getAccessToken();
    server.hang();
    try {
      expect(await tm.getAccessToken()).toBe(token);
      clock.offsetMs = EXPIRED_MS;
      const started = performance.now();
      const error = await tm.getAccessToken().catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: "STORAGE_FAILED",
        cause: { code: "COMMAND_FAILED", message: expect.stringContaining("no answer within 500 ms") },
      });
      const lockError = await storage.lock(`${NAME}:lock`, async () => "ran").catch((e: unknown) => e);
      expect(lockError).toMatchObject({
        code: "STORAGE_FAILED",
        cause: { code: "LOCK_UNAVAILABLE", message: expect.stringContaining("no answer within 500 ms") },
      });
      // Each bounded: a read, then the lock (its connection, its statements), never the outage.
      expect(performance.now() - started).toBeLessThan(30_000);
      expect(refreshes(sandbox)).toBe(0);
    } finally {
      server.resume();
    }
    expect(await tm.getAccessToken()).not.toBe(token);
    expect(refreshes(sandbox)).toBe(1);
    expect(sandbox.sandbox.ledger.list().reuses).toEqual([]);
  });

  it("restarted: what was committed is there, the pool reconnects, one refresh continues the session", async () => {
    const { storage, table } = await setUp();
    const { tm, sandbox, clock } = await signedIn(storage);
    const before = await storedRefreshToken(table);
    await server.restart();
    const other = managerFor(postgresStorage(openPool({}, server.url), { ...TENANT, table }), sandbox, clock);
    clock.offsetMs = EXPIRED_MS;
    const [a, b] = await Promise.all([tm.getAccessToken(), other.getAccessToken()]);
    expect(a).toBe(b);
    expect(refreshes(sandbox)).toBe(1);
    expect(await storedRefreshToken(table)).not.toBe(before);
  });

  it("a write cancelled by statement_timeout: the new tokens are handed out, kept, and written once the row is free", async () => {
    const { storage, table } = await setUp({}, { options: "-c statement_timeout=300" });
    const { tm, sandbox, clock } = await signedIn(storage);
    const failures: TokenManagerError[] = [];
    tm.on("storage-failed", ({ error }) => failures.push(error));
    // Another transaction holds the tokens' row (a long migration, a stuck job): the write waits, and is cancelled.
    const blocker = await openPool({}, server.url).connect();
    await blocker.query(`BEGIN; SELECT * FROM ${table} WHERE kind = 'tokens' FOR UPDATE`);
    let token: string;
    try {
      clock.offsetMs = EXPIRED_MS;
      token = await tm.getAccessToken();
      expect(refreshes(sandbox)).toBe(1);
      expect(failures[0]).toMatchObject({
        code: "STORAGE_FAILED",
        cause: {
          code: "COMMAND_FAILED",
          message: expect.stringMatching(/INSERT of .* failed: the server cancelled it: statement_timeout.*57014/),
        },
      });
      expect(await tm.getAccessToken()).toBe(token);
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    // Written again within a second of the row coming free, without a call: nothing lost.
    const deadline = performance.now() + 10_000;
    while ((await storedAccessToken(table)) !== token && performance.now() < deadline) await sleep(100);
    expect(await storedAccessToken(table)).toBe(token);
    expect(refreshes(sandbox)).toBe(1);
  });

  it("a hot standby given as the primary: READ_ONLY at the first call, for reads, writes and the lock; the primary's session untouched", async () => {
    const { storage, table } = await setUp();
    const { tm } = await signedIn(storage);
    const before = await storedRefreshToken(table);
    const standby = await server.standby();
    try {
      const replica = postgresStorage(openPool({}, standby.url), { ...TENANT, table });
      await expect(replica.get(`${NAME}:tokens`)).rejects.toMatchObject({
        name: "PostgresStorageError",
        code: "READ_ONLY",
        message: expect.stringContaining("the server is a hot standby (pg_is_in_recovery() is true)"),
      });
      const sandbox = inProcessSandbox();
      const onReplica = managerFor(replica, sandbox);
      await expect(onReplica.getAccessToken()).rejects.toMatchObject({
        code: "STORAGE_FAILED",
        cause: { code: "READ_ONLY" },
      });
      await expect(replica.lock(`${NAME}:lock`, async () => "ran")).rejects.toMatchObject({
        code: "STORAGE_FAILED",
        cause: { code: "READ_ONLY" },
      });
    } finally {
      await standby.close();
    }
    expect(await storedRefreshToken(table)).toBe(before);
    expect(await tm.getAccessToken()).toBeTypeOf("string");
  });

  it("a server whose transactions are read-only by default: READ_ONLY, saying so", async () => {
    const { storage } = await setUp({}, { options: "-c default_transaction_read_only=on" });
    await expect(storage.set(`${NAME}:tokens`, "v")).rejects.toMatchObject({
      code: "READ_ONLY",
      message: expect.stringContaining("default_transaction_read_only is on"),
    });
  });

  it("the lock's connection dropped mid-refresh (pg_terminate_backend): before the request, nothing is sent and the lock is taken again; after, the tokens are stored", async () => {
    for (const when of ["before the request", "while it is in flight"] as const) {
      const { storage, pool } = await setUp();
      const sandbox = inProcessSandbox();
      const clock = { offsetMs: 0 };
      let dropped = false;
      const drop = async () => {
        dropped = true;
        await pool.query(
          "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()",
        );
      };
      const fetch: typeof sandbox.fetch = async (input, init) => {
        const refreshing = String(init?.body).includes('"refresh_token"');
        if (when === "while it is in flight" && refreshing && !dropped) await drop();
        return sandbox.fetch(input, init);
      };
      const tm = managerFor(
        {
          ...storage,
          async set(name, value) {
            if (when === "before the request" && !dropped && name.endsWith(":intent")) await drop();
            return storage.set(name, value);
          },
        },
        { ...sandbox, fetch },
        clock,
      );
      await signIn(tm, sandbox);
      clock.offsetMs = EXPIRED_MS;
      const token = await tm.getAccessToken();
      expect(dropped, when).toBe(true);
      expect(refreshes(sandbox), when).toBe(1);
      const other = managerFor(
        postgresStorage(openPool({}, server.url), { ...TENANT, table: storage.table }),
        sandbox,
        clock,
      );
      expect(await other.getAccessToken(), when).toBe(token);
      expect(sandbox.sandbox.ledger.list().reuses, when).toEqual([]);
    }
  });
});
