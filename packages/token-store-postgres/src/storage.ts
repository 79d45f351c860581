/**
 * Token storage on PostgreSQL, one row per record, carrying its refresh lock.
 *
 * @see RFC 6749 §10.4 (refresh tokens), RFC 9700 §4.14.2 (rotation); spec/token-store/README.md, "PostgreSQL"
 */
import { type Lock, type RefreshIntents, refreshIntents, type TokenStorage } from "@tenant-integration/token-manager";
import { processIdentity } from "@tenant-integration/token-manager/node";
import { PostgresStorageError } from "./errors.js";
import { lockOn, lockSettings, type PostgresLockOptions } from "./lock.js";
import { run, type PostgresPoolLike } from "./pool.js";
import { describeRow, rowOf, scopeOf, type RowKey } from "./rows.js";
import { checkSchema, tableName, type TableName } from "./schema.js";

/**
 * Options of {@link postgresStorage}: whose records it keeps (the token manager's `baseUrl` and
 * `clientId`), in which table, and the lock's options.
 *
 * @example
 * ```ts
 * const options: PostgresStorageOptions = {
 *   baseUrl: "https://acme.tenant.test",
 *   clientId: "demo-integration",
 *   table: "billing.oauth_tokens",
 * };
 * ```
 * @see RFC 6749 §10.4
 */
export interface PostgresStorageOptions extends PostgresLockOptions {
  /**
   * The token manager's `baseUrl` (its origin is what the rows' `origin` holds). The storage keeps
   * the records of this tenant and client only: a name of another is refused with `UNKNOWN_NAME`.
   */
  baseUrl: string;
  /** The token manager's `clientId` (the rows' `client_id`). */
  clientId: string;
  /**
   * The table: `name` or `schema.name`, lowercase letters, digits and `_` (default
   * `tenant_integration_records`, in the first schema of the `search_path`). It must exist (see
   * `ensureSchema` and `schemaSql`): the storage never creates it.
   */
  table?: string;
}

/**
 * A {@link TokenStorage} whose `lock` is always there, with the optional capabilities of pending
 * sign-ins by state: what {@link postgresStorage} returns.
 *
 * @example
 * ```ts
 * const storage: PostgresTokenStorage = postgresStorage(pool, { baseUrl: "https://acme.tenant.test", clientId: "demo" });
 * await storage.lock("tenant-integration:https://acme.tenant.test:demo:lock", async () => {});
 * ```
 * @see RFC 9700 §4.14.2
 */
export interface PostgresTokenStorage extends TokenStorage {
  /** The advisory lock of {@link postgresLock}, which `createTokenManager` uses unless given its own `lock`. */
  readonly lock: Lock;
  /** The refresh intents the manager writes beside that lock (the token manager's README, "Paused processes"). */
  readonly refreshIntents: RefreshIntents;
  /** The table, as given (or the default). */
  readonly table: string;
  /**
   * Where a user finds the row of the manager's `name`: the table and its key, as a condition to
   * paste into a query. The row the manager's messages name.
   */
  where(name: string): string;
  /**
   * Stores `value` under `name`, to be dropped once `lifetimeMs` has passed (by the server's clock):
   * a pending sign-in. Expired rows are deleted by the next `setExpiring`, through the `expires_at`
   * index (never a scan), and read as absent meanwhile.
   */
  setExpiring(name: string, value: string, lifetimeMs: number): Promise<void>;
  /**
   * Returns the value under `name` and deletes it in one statement (`DELETE … RETURNING`): of any
   * number of concurrent takes, in any processes, at most one gets it. `null` when absent or expired.
   */
  take(name: string): Promise<string | null>;
}

/** How many expired rows one `setExpiring` deletes at most: the clean-up of one sign-in stays short. */
const CLEANUP_BATCH = 100;

/** The key columns in the primary key's order, and their parameters $1..$4. */
const KEY = "session = $1 AND origin = $2 AND client_id = $3 AND kind = $4";
const keyValues = (row: RowKey): unknown[] => [row.session, row.origin, row.clientId, row.kind];

/** `get`: the value, unless the row has expired. */
function select(table: TableName, row: RowKey, where: string) {
  return {
    text: `SELECT value FROM ${table.sql} WHERE ${KEY} AND (expires_at IS NULL OR expires_at > now())`,
    values: keyValues(row),
    what: `SELECT of ${where}`,
  };
}

/**
 * `set` and `setExpiring`: an upsert of the row; with a lifetime, it also deletes up to
 * {@link CLEANUP_BATCH} expired rows (others', never this one), skipping rows another statement holds.
 */
function upsert(table: TableName, row: RowKey, where: string, value: string, lifetimeMs?: number) {
  const upserted = `INSERT INTO ${table.sql} AS t (session, origin, client_id, kind, value, expires_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, ${lifetimeMs === undefined ? "NULL" : "now() + $6 * interval '1 millisecond'"}, now())
    ON CONFLICT (session, origin, client_id, kind)
    DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, updated_at = excluded.updated_at`;
  if (lifetimeMs === undefined)
    return { text: upserted, values: [...keyValues(row), value], what: `INSERT of ${where}` };
  return {
    text: `WITH expired AS (
        DELETE FROM ${table.sql} WHERE (session, origin, client_id, kind) IN (
          SELECT session, origin, client_id, kind FROM ${table.sql}
          WHERE expires_at <= now() AND NOT (${KEY})
          ORDER BY expires_at LIMIT ${CLEANUP_BATCH} FOR UPDATE SKIP LOCKED))
      ${upserted}`,
    values: [...keyValues(row), value, lifetimeMs],
    what: `INSERT of ${where}`,
  };
}

/** `take`: deletes the row and returns its value, and whether it was still live. */
function takeRow(table: TableName, row: RowKey, where: string) {
  return {
    text: `DELETE FROM ${table.sql} WHERE ${KEY} RETURNING value, (expires_at IS NULL OR expires_at > now()) AS live`,
    values: keyValues(row),
    what: `DELETE of ${where}`,
  };
}

/** `delete`. */
function remove(table: TableName, row: RowKey, where: string) {
  return { text: `DELETE FROM ${table.sql} WHERE ${KEY}`, values: keyValues(row), what: `DELETE of ${where}` };
}

/** Checks a lifetime: a whole number of milliseconds > 0. */
function lifetime(lifetimeMs: number): number {
  if (!(Number.isFinite(lifetimeMs) && lifetimeMs > 0)) {
    throw new PostgresStorageError(
      "INVALID_OPTIONS",
      "setExpiring's lifetime must be a finite number of milliseconds > 0",
    );
  }
  return Math.ceil(lifetimeMs);
}

/**
 * Stores the token manager's records in a PostgreSQL table, one row per record keyed by tenant
 * origin, client id, session id and kind, and brings the advisory lock that makes one refresh out of
 * many across every process sharing the database. Values are the manager's JSON texts, stored as
 * they are (the same texts as in a token file or Redis) and never logged.
 *
 * `get` is a `SELECT`, `set` an `INSERT … ON CONFLICT DO UPDATE` (resolving once committed: each
 * statement runs on its own connection of the pool, autocommit, never inside the lock's
 * transaction), `delete` a `DELETE`; `setExpiring` and `take` serve pending sign-ins (`DELETE …
 * RETURNING`: single use). Every statement waits for a connection and then for its answer at most
 * `commandTimeoutMs` (default 5 000), so a server that stops answering fails a call instead of
 * blocking it for the outage.
 *
 * At its first use the storage checks the table (once per pool and table): that it exists, that its
 * comment says it is this version, and that the server takes writes. It never runs DDL: create the
 * table with your migrations (`schemaSql()`) or `ensureSchema(pool)`.
 *
 * @throws {@link PostgresStorageError} `INVALID_OPTIONS` at once for a bad option (a `baseUrl` that is
 * not an http(s) URL, an empty `clientId`, a table name that is not `name` or `schema.name`, a pool
 * whose `max` is 1). Its methods reject with `SCHEMA_MISSING`, `SCHEMA_MISMATCH`, `READ_ONLY`,
 * `UNKNOWN_NAME` or `COMMAND_FAILED` (cause: the driver's error, its SQLSTATE in `cause.code`, or a
 * `TimeoutError`), saying why; the token manager turns those into `STORAGE_FAILED`.
 * @example
 * ```ts
 * import pg from "pg";
 * import { createTokenManager } from "@tenant-integration/token-manager";
 * import { postgresStorage } from "@tenant-integration/token-store-postgres";
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const tenant = { baseUrl: "https://acme.tenant.test", clientId: "demo-integration" };
 * const tm = createTokenManager({
 *   ...tenant,
 *   redirectUri: "https://app.example.org/callback",
 *   scopes: ["profile:read"],
 *   storage: postgresStorage(pool, tenant),
 * });
 * ```
 * @see RFC 6749 §6, §10.4; RFC 9700 §4.14.2
 */
export function postgresStorage(pool: PostgresPoolLike, options: PostgresStorageOptions): PostgresTokenStorage {
  const scope = scopeOf(options?.baseUrl, options?.clientId);
  const table = tableName(options.table);
  const settings = lockSettings(pool, options);
  const { commandTimeoutMs: timeoutMs } = settings;
  const lock = lockOn(pool, settings);

  /** Runs the statement `make` builds for the row of `name`, after the first-use check of the table. */
  const statement = async (
    name: string,
    make: (row: RowKey, where: string) => { text: string; values: unknown[]; what: string },
  ) => {
    const row = rowOf(scope, name);
    await checkSchema(pool, table, timeoutMs);
    return run(pool, make(row, describeRow(table.text, row)), timeoutMs);
  };

  return {
    lock,
    refreshIntents,
    table: table.text,
    processIdentity: processIdentity(),
    where: (name) => describeRow(table.text, rowOf(scope, name)),
    async get(name) {
      const rows = await statement(name, (row, where) => select(table, row, where));
      return rows.length ? String(rows[0]!["value"]) : null;
    },
    async set(name, value) {
      await statement(name, (row, where) => upsert(table, row, where, value));
    },
    async setExpiring(name, value, lifetimeMs) {
      const ms = lifetime(lifetimeMs);
      await statement(name, (row, where) => upsert(table, row, where, value, ms));
    },
    async take(name) {
      const [taken] = await statement(name, (row, where) => takeRow(table, row, where));
      return taken && taken["live"] === true ? String(taken["value"]) : null;
    },
    async delete(name) {
      await statement(name, (row, where) => remove(table, row, where));
    },
  };
}
