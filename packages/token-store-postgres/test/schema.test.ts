/**
 * The table against a real PostgreSQL: a storage refuses a missing table and a table of another
 * version, saying which and what to run, and writes nothing; `ensureSchema` creates it once however
 * many processes start together, and refuses to touch a table that is not the kit's; the shared
 * schema.sql, applied as a user's migration would, makes a table the storage takes.
 */
import { readFileSync } from "node:fs";
import { TokenManagerError } from "@tenant-integration/token-manager";
import { describe, expect, it } from "vitest";
import { ensureSchema, postgresStorage, SCHEMA_VERSION, schemaSql } from "../src/index.js";
import { inProcessSandbox, managerFor, openPool, TENANT, uniqueTable } from "./support/helpers.js";

const NAME = "tenant-integration:http://127.0.0.1:4020:fleet-demo:tokens";
const exists = async (pool: ReturnType<typeof openPool>, table: string) =>
  (await pool.query("SELECT to_regclass($1) IS NOT NULL AS found", [table])).rows[0].found as boolean;

describe("the table", () => {
  it("missing: the storage fails with SCHEMA_MISSING naming the table and what to run, and creates nothing", async () => {
    const pool = openPool();
    const table = uniqueTable();
    const storage = postgresStorage(pool, { ...TENANT, table });
    const error = await storage.get(NAME).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "PostgresStorageError",
      code: "SCHEMA_MISSING",
      message: `SCHEMA_MISSING: the table ${table} does not exist: apply its schema (schemaSql() of @tenant-integration/token-store-postgres, spec/token-store/postgres/schema.sql) with your migrations, or call ensureSchema(pool) once at start`,
    });
    const sandbox = inProcessSandbox();
    const signIn = await managerFor(storage, sandbox)
      .beginAuthorization()
      .catch((e: unknown) => e);
    expect(signIn).toBeInstanceOf(TokenManagerError);
    expect(signIn).toMatchObject({ code: "STORAGE_FAILED", cause: { code: "SCHEMA_MISSING" } });
    expect(await exists(pool, table)).toBe(false);

    // Made by a migration while the app runs: the next call works, without a restart.
    await pool.query(schemaSql({ table }));
    await storage.set(NAME, "after the migration");
    expect(await storage.get(NAME)).toBe("after the migration");
  });

  it("of another version, or another application's: SCHEMA_MISMATCH saying what it found, and nothing is written", async () => {
    const pool = openPool();
    const table = uniqueTable();
    await pool.query(
      `CREATE TABLE ${table} (origin text, client_id text, session text, kind text, value text, expires_at timestamptz, updated_at timestamptz)`,
    );
    const storage = postgresStorage(pool, { ...TENANT, table });
    await expect(storage.set(NAME, "x")).rejects.toMatchObject({
      code: "SCHEMA_MISMATCH",
      message: expect.stringContaining(
        `the table ${table} is not the kit's (it has no comment, not "${SCHEMA_VERSION}")`,
      ),
    });
    await pool.query(`COMMENT ON TABLE ${table} IS 'tenant-integration token store v2'`);
    const other = postgresStorage(openPool(), { ...TENANT, table });
    await expect(other.set(NAME, "x")).rejects.toMatchObject({
      code: "SCHEMA_MISMATCH",
      message: expect.stringContaining(`its comment is "tenant-integration token store v2"`),
    });
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows).toEqual([{ n: 0 }]);
    // ensureSchema changes nothing of it either.
    await expect(ensureSchema(pool, { table })).rejects.toMatchObject({ code: "SCHEMA_MISMATCH" });
    const comment = await pool.query("SELECT obj_description($1::regclass, 'pg_class') AS c", [table]);
    expect(comment.rows).toEqual([{ c: "tenant-integration token store v2" }]);
  });

  it("with the kit's comment but not its columns: SCHEMA_MISMATCH from the server's own answer", async () => {
    const pool = openPool();
    const table = uniqueTable();
    await pool.query(`CREATE TABLE ${table} (name text); COMMENT ON TABLE ${table} IS '${SCHEMA_VERSION}'`);
    await expect(postgresStorage(pool, { ...TENANT, table }).get(NAME)).rejects.toMatchObject({
      code: "SCHEMA_MISMATCH",
      message: expect.stringMatching(/the table is not this kit's \(column "\w+" does not exist, 42703\)/),
      cause: { code: "42703" },
    });
  });

  it("is created once by ensureSchema, however many processes start together", async () => {
    const table = uniqueTable();
    const pools = Array.from({ length: 5 }, () => openPool({ max: 2 }));
    const results = await Promise.all(pools.map((pool) => ensureSchema(pool, { table })));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await ensureSchema(pools[0]!, { table })).toEqual({ created: false });
    const storage = postgresStorage(pools[1]!, { ...TENANT, table });
    await storage.set(NAME, "v");
    expect(await storage.get(NAME)).toBe("v");
  });

  it("is made by the shared schema.sql, applied as a migration tool would, in a schema of the app's", async () => {
    const pool = openPool();
    const schema = uniqueTable();
    await pool.query(`CREATE SCHEMA ${schema}`);
    const sql = readFileSync(new URL("../../../spec/token-store/postgres/schema.sql", import.meta.url), "utf8");
    await pool.query(`BEGIN; SET LOCAL search_path = ${schema}; ${sql}; COMMIT`);
    const storage = postgresStorage(pool, { ...TENANT, table: `${schema}.tenant_integration_records` });
    await storage.set(NAME, "in the app's schema");
    const { rows } = await pool.query(`SELECT value FROM ${schema}.tenant_integration_records`);
    expect(rows).toEqual([{ value: "in the app's schema" }]);
  });

  it("refuses rows that are no record of the kit's (its constraints), so every kit reads what any kit wrote", async () => {
    const pool = openPool();
    const table = uniqueTable();
    await ensureSchema(pool, { table });
    const insert = (session: string, kind: string) =>
      pool.query(`INSERT INTO ${table} (origin, client_id, session, kind, value) VALUES ('o', 'c', $1, $2, 'v')`, [
        session,
        kind,
      ]);
    await expect(insert("a:b", "tokens")).rejects.toMatchObject({ code: "23514" });
    await expect(insert("", "lock")).rejects.toMatchObject({ code: "23514" });
    await expect(insert("", "pending:XYZ")).rejects.toMatchObject({ code: "23514" });
    await insert("auth0|64f1c2a9e1b7", "tokens");
    await insert("", `pending:${"f".repeat(32)}`);
  });
});
