/**
 * postgresStorage against a real PostgreSQL, alone and under the token manager: one row per record
 * keyed by origin, client id, session and kind, holding the manager's JSON text as it is; the lock it
 * carries; the fresh-token path staying off the database; pending sign-ins taken once and expired
 * through the index; errors that name the row and never a value.
 */
import { TokenManagerError } from "@tenant-integration/token-manager";
import { describe, expect, it } from "vitest";
import { PostgresStorageError, postgresStorage } from "../src/index.js";
import {
  EXPIRED_MS,
  inProcessSandbox,
  managerFor,
  newTable,
  openPool,
  signIn,
  sleep,
  TENANT,
} from "./support/helpers.js";

const NAME = "tenant-integration:http://127.0.0.1:4020:fleet-demo";
const pendingName = (key: string) => `${NAME}:pending:${key}`;

describe("postgresStorage", () => {
  it("stores each record in a row keyed by origin, client id, session and kind, its value the text as given", async () => {
    const pool = openPool();
    const table = await newTable(pool);
    const storage = postgresStorage(pool, { ...TENANT, table });
    const value = '{"b":2,"a":"é \\" ü"}'; // key order, escapes and non-ASCII kept as they are
    expect(await storage.get(`${NAME}:tokens`)).toBeNull();
    await storage.set(`${NAME}:tokens`, value);
    await storage.set(`${NAME}:auth0|64f1c2a9e1b7:tokens`, "session");
    await storage.set(`${NAME}:42:intent`, "intent of 42");
    await storage.setExpiring(pendingName("0f007385b6f9d4b7eeb2748605afe1a9"), "pending", 60_000);
    // Committed before set resolved: another connection sees it at once.
    const { rows } = await pool.query(
      `SELECT origin, client_id, session, kind, value, expires_at IS NOT NULL AS expires FROM ${table} ORDER BY session, kind`,
    );
    expect(rows).toEqual([
      {
        origin: TENANT.baseUrl,
        client_id: "fleet-demo",
        session: "",
        kind: "pending:0f007385b6f9d4b7eeb2748605afe1a9",
        value: "pending",
        expires: true,
      },
      { origin: TENANT.baseUrl, client_id: "fleet-demo", session: "", kind: "tokens", value, expires: false },
      {
        origin: TENANT.baseUrl,
        client_id: "fleet-demo",
        session: "42",
        kind: "intent",
        value: "intent of 42",
        expires: false,
      },
      {
        origin: TENANT.baseUrl,
        client_id: "fleet-demo",
        session: "auth0|64f1c2a9e1b7",
        kind: "tokens",
        value: "session",
        expires: false,
      },
    ]);
    expect(await storage.get(`${NAME}:tokens`)).toBe(value);
    await storage.set(`${NAME}:tokens`, "replaced");
    expect(await storage.get(`${NAME}:tokens`)).toBe("replaced");
    await storage.delete(`${NAME}:tokens`);
    await storage.delete(`${NAME}:tokens`); // absent: still resolves
    expect(await storage.get(`${NAME}:tokens`)).toBeNull();
  });

  it("lets an app delete a user's rows by session id alone, and names each row so it can be pasted into a query", async () => {
    const pool = openPool();
    const table = await newTable(pool);
    const storage = postgresStorage(pool, { ...TENANT, table });
    await storage.set(`${NAME}:42:tokens`, "tokens of 42");
    await storage.set(`${NAME}:42:intent`, "intent of 42");
    await storage.set(`${NAME}:43:tokens`, "tokens of 43");
    expect(storage.where(`${NAME}:43:tokens`)).toBe(
      `${table} (origin, client_id, session, kind) = ('http://127.0.0.1:4020', 'fleet-demo', '43', 'tokens')`,
    );
    const found = await pool.query(
      `SELECT value FROM ${storage.where(`${NAME}:43:tokens`)}`.replace(" (origin", " WHERE (origin"),
    );
    expect(found.rows).toEqual([{ value: "tokens of 43" }]);
    await pool.query(`DELETE FROM ${table} WHERE session = $1`, ["42"]);
    expect(await storage.get(`${NAME}:42:tokens`)).toBeNull();
    expect(await storage.get(`${NAME}:43:tokens`)).toBe("tokens of 43");
  });

  it("keeps a signed-in manager's tokens in the row of its scope, and the session goes on across managers", async () => {
    const pool = openPool();
    const table = await newTable(pool);
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    const tm = managerFor(postgresStorage(pool, { ...TENANT, table }), sandbox, clock);
    await signIn(tm, sandbox);
    const { rows } = await pool.query(`SELECT session, kind, value FROM ${table}`);
    expect(rows).toEqual([{ session: "", kind: "tokens", value: expect.stringContaining('"refresh_token"') }]);
    const other = managerFor(postgresStorage(pool, { ...TENANT, table }), sandbox, clock);
    clock.offsetMs = EXPIRED_MS;
    expect(await other.getAccessToken()).toBe(await tm.getAccessToken());
    expect(sandbox.sandbox.events().filter((e) => e.grantType === "refresh_token")).toHaveLength(1);
  });

  it("carries its lock, which the manager takes around a refresh: the advisory lock of the session's lock name, granted to one server process", async () => {
    const pool = openPool();
    const table = await newTable(pool);
    const sandbox = inProcessSandbox();
    const clock = { offsetMs: 0 };
    await signIn(managerFor(postgresStorage(pool, { ...TENANT, table }), sandbox, clock), sandbox);
    const storage = postgresStorage(pool, { ...TENANT, table });
    const seen: { name: string; granted: unknown[] }[] = [];
    const tm = managerFor(
      {
        ...storage,
        lock: (name, task, wait) =>
          storage.lock(
            name,
            async (held) => {
              const { rows } = await pool.query(
                `SELECT l.granted FROM pg_locks l WHERE l.locktype = 'advisory' AND l.objsubid = 1
                   AND l.classid::bigint = (hashtextextended($1, 0) >> 32) & 4294967295
                   AND l.objid::bigint = hashtextextended($1, 0) & 4294967295`,
                [name],
              );
              seen.push({ name, granted: rows.map((r) => r.granted) });
              return task(held);
            },
            wait,
          ),
      },
      sandbox,
      clock,
    );
    clock.offsetMs = EXPIRED_MS;
    await tm.getAccessToken();
    expect(seen).toEqual([{ name: `${NAME}:lock`, granted: [true] }]);
    const left = await pool.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'");
    expect(left.rows).toEqual([{ n: 0 }]);
  });

  it("never goes to the database on the fresh-token path: the manager answers from memory", async () => {
    const pool = openPool();
    const table = await newTable(pool);
    const sandbox = inProcessSandbox();
    await signIn(managerFor(postgresStorage(pool, { ...TENANT, table }), sandbox), sandbox);
    let checkouts = 0;
    const counted = {
      options: pool.options,
      connect: () => {
        checkouts++;
        return pool.connect();
      },
    };
    const other = managerFor(postgresStorage(counted, { ...TENANT, table }), sandbox);
    const token = await other.getAccessToken();
    // The table's check at this pool's first use, then the SELECT of the record, without the lock.
    expect(checkouts).toBe(2);
    for (let i = 0; i < 1_000; i++) expect(await other.getAccessToken()).toBe(token);
    expect(checkouts).toBe(2);
  });

  it("gives a pending sign-in to one taker only: of 20 concurrent takes from 20 pools, one gets it", async () => {
    const pool = openPool();
    const table = await newTable(pool);
    const name = pendingName("13d31e961a1ad8ec2f16b10c4c982e08");
    await postgresStorage(pool, { ...TENANT, table }).setExpiring(name, "the pending record", 60_000);
    const takers = Array.from({ length: 20 }, () => postgresStorage(openPool({ max: 2 }), { ...TENANT, table }));
    const taken = await Promise.all(takers.map((s) => s.take(name)));
    expect(taken.filter((v) => v !== null)).toEqual(["the pending record"]);
    expect(await postgresStorage(pool, { ...TENANT, table }).get(name)).toBeNull();
  });

  it("reads an expired pending sign-in as absent, and deletes expired rows at the next setExpiring, through the expires_at index", async () => {
    const pool = openPool();
    const table = await newTable(pool);
    const storage = postgresStorage(pool, { ...TENANT, table });
    const old = pendingName("0".repeat(32));
    await storage.setExpiring(old, "abandoned", 50);
    await sleep(120);
    expect(await storage.get(old)).toBeNull();
    const left = await pool.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(left.rows).toEqual([{ n: 1 }]); // still there: nothing scans for it
    await storage.setExpiring(pendingName("1".repeat(32)), "new", 60_000);
    const after = await pool.query(`SELECT kind FROM ${table}`);
    expect(after.rows).toEqual([{ kind: `pending:${"1".repeat(32)}` }]);
    expect(await storage.take(old)).toBeNull();

    // Among many rows the clean-up's search is an index scan of the expired rows alone.
    await pool.query(
      `INSERT INTO ${table} (origin, client_id, session, kind, value)
         SELECT 'https://other.tenant.test', 'c', 's' || i, 'tokens', 'v' FROM generate_series(1, 20000) i`,
    );
    await pool.query(`ANALYZE ${table}`);
    const plan = await pool.query(
      `EXPLAIN SELECT session, origin, client_id, kind FROM ${table}
         WHERE expires_at <= now() ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED`,
    );
    const text = plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
    expect(text).toContain(`Index Scan using ${table}_expires_at`);
    expect(text).not.toContain("Seq Scan");
    // And an app's delete by session id is an index search too (the primary key starts with it).
    const bySession = await pool.query(`EXPLAIN DELETE FROM ${table} WHERE session = 's42'`);
    expect(bySession.rows.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(
      new RegExp(`Index Scan (using|on) ${table}_pkey`),
    );
  });

  it("refuses a name of another tenant or client with UNKNOWN_NAME, before any statement", async () => {
    let checkouts = 0;
    const pool = openPool();
    const storage = postgresStorage(
      {
        options: pool.options,
        connect: () => {
          checkouts++;
          return pool.connect();
        },
      },
      { ...TENANT, table: "never_made" },
    );
    const error = await storage.get("tenant-integration:https://acme.tenant.test:demo:tokens").catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "PostgresStorageError", code: "UNKNOWN_NAME" });
    expect((error as Error).message).toContain("give postgresStorage the token manager's own baseUrl and clientId");
    expect(checkouts).toBe(0);
  });

  it("rejects a failed statement with a typed error naming the row and why, never the value; the manager reports STORAGE_FAILED", async () => {
    const pool = openPool();
    const table = await newTable(pool);
    const role = `reader_${table}`;
    await pool.query(`CREATE ROLE ${role} LOGIN; GRANT SELECT ON ${table} TO ${role}`);
    const url = new URL(pool.options.connectionString!);
    url.username = role;
    const reader = postgresStorage(openPool({}, url.href), { ...TENANT, table });
    const error = await reader.set(`${NAME}:tokens`, '{"refresh_token":"rt-secret"}').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PostgresStorageError);
    expect(error).toMatchObject({
      code: "COMMAND_FAILED",
      message: expect.stringMatching(
        new RegExp(
          `^COMMAND_FAILED: INSERT of ${table} \\(origin, client_id, session, kind\\) = \\('http://127.0.0.1:4020', 'fleet-demo', '', 'tokens'\\) failed: permission denied for table ${table} \\(42501\\): grant SELECT, INSERT, UPDATE and DELETE on the table$`,
        ),
      ),
      cause: { code: "42501" },
    });
    expect(JSON.stringify(error) + String(error) + String((error as Error).cause)).not.toContain("rt-secret");

    const sandbox = inProcessSandbox();
    const tm = managerFor(reader, sandbox);
    const managerError = await tm.beginAuthorization().catch((e: unknown) => e);
    expect(managerError).toBeInstanceOf(TokenManagerError);
    expect(managerError).toMatchObject({ code: "STORAGE_FAILED", cause: { code: "COMMAND_FAILED" } });
  });
});
