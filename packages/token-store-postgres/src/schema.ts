/**
 * The table every kit shares (spec/token-store/postgres/schema.sql, version 1): its DDL for a table
 * name, the check a storage makes at its first use, and `ensureSchema`, the one place the kit runs
 * DDL, when the app asks it to.
 *
 * @see spec/token-store/README.md, "PostgreSQL"
 */
import { PostgresStorageError } from "./errors.js";
import { checkout, DEFAULT_COMMAND_TIMEOUT_MS, failure, query, run, type PostgresPoolLike } from "./pool.js";

/**
 * The table's comment, which says which version of the schema it is. A storage refuses a table
 * whose comment is another (`SCHEMA_MISMATCH`), so a table of another application, or of another
 * version of the kit, is never written to.
 */
export const SCHEMA_VERSION = "tenant-integration token store v1";

/** The default table: in the schema first on the `search_path` (usually `public`). */
export const DEFAULT_TABLE = "tenant_integration_records";

/**
 * One identifier part: lowercase letters, digits and `_`, as PostgreSQL folds an unquoted name. At
 * most 48 characters, so that the index and constraint names made from it (`<name>_expires_at`) stay
 * within PostgreSQL's 63 bytes and are never cut short.
 */
const PART = /^[a-z_][a-z0-9_]{0,47}$/;

/** A table name checked and parsed: `name` or `schema.name`. */
export interface TableName {
  /** As the user wrote it, for messages: `billing.oauth_tokens`. */
  readonly text: string;
  /** Quoted for SQL: `"billing"."oauth_tokens"`. */
  readonly sql: string;
  /** The table's own name, without its schema: what its index and constraints are named after. */
  readonly name: string;
}

/**
 * Checks a table name: `name` or `schema.name`, each part of lowercase letters, digits and `_`
 * (starting with a letter or `_`), at most 48 characters, so that it means the same quoted or not.
 *
 * @throws {@link PostgresStorageError} `INVALID_OPTIONS` otherwise.
 */
export function tableName(table: unknown = DEFAULT_TABLE): TableName {
  const parts = typeof table === "string" ? table.split(".") : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((part) => PART.test(part))) {
    throw new PostgresStorageError(
      "INVALID_OPTIONS",
      `table ${JSON.stringify(table)} must be "name" or "schema.name", each of lowercase letters, digits and _ (at most 48), starting with a letter or _`,
    );
  }
  return { text: table as string, sql: parts.map((part) => `"${part}"`).join("."), name: parts.at(-1)! };
}

/**
 * The DDL of the table (version {@link SCHEMA_VERSION}) named `table` (default
 * `tenant_integration_records`): what `ensureSchema` runs, and what to give your migrations. For the
 * default name it is exactly `spec/token-store/postgres/schema.sql`. Plain `CREATE` statements: run
 * once, in a transaction of your migration tool's.
 *
 * @throws {@link PostgresStorageError} `INVALID_OPTIONS` for a table name that is not `name` or
 * `schema.name` of lowercase letters, digits and `_`.
 * @example
 * ```ts
 * import { schemaSql } from "@tenant-integration/token-store-postgres";
 * const migration = schemaSql({ table: "billing.oauth_tokens" }); // CREATE TABLE "billing"."oauth_tokens" (…
 * ```
 * @see spec/token-store/README.md, "PostgreSQL"
 */
export function schemaSql(options: { table?: string } = {}): string {
  const { sql, name } = tableName(options.table);
  return `-- The token store of the Tenant Integration SDK, shared by its TypeScript, Python and Go kits:
-- one row per record of spec/token-store (tokens, a refresh intent, a pending sign-in), keyed by
-- tenant origin, client id, session id and kind. Version: the table's comment.
CREATE TABLE ${sql} (
  origin     text        NOT NULL, -- the tenant's origin: https://acme.tenant.test
  client_id  text        NOT NULL, -- the OAuth client id
  session    text        NOT NULL, -- the app's session id; '' without one, and for pending sign-ins
  kind       text        NOT NULL, -- tokens, intent, or pending:<first 32 hex digits of SHA-256(state)>
  value      text        NOT NULL, -- the record's JSON text, as every storage stores it
  expires_at timestamptz,          -- when a pending sign-in may be dropped; NULL: never
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- The session first: an app finds and deletes a user's rows by session id alone.
  CONSTRAINT "${name}_pkey" PRIMARY KEY (session, origin, client_id, kind),
  CONSTRAINT "${name}_session" CHECK (session = '' OR session ~ '^[A-Za-z0-9._~@+=|-]{1,128}$'),
  CONSTRAINT "${name}_kind" CHECK (kind IN ('tokens', 'intent', 'pending') OR kind ~ '^pending:[0-9a-f]{32}$')
);
-- Expired pending sign-ins are found (and dropped) through this index, never by a scan.
CREATE INDEX "${name}_expires_at" ON ${sql} (expires_at) WHERE expires_at IS NOT NULL;
COMMENT ON TABLE ${sql} IS '${SCHEMA_VERSION}';
`;
}

/** What the first-use check reads: whether the table is there, its version, and whether the server takes writes. */
function inspection(table: TableName) {
  return {
    text: `SELECT to_regclass($1) IS NOT NULL AS found, obj_description(to_regclass($1), 'pg_class') AS version,
      pg_is_in_recovery() AS standby, current_setting('transaction_read_only') = 'on' AS read_only`,
    values: [table.sql],
    what: `the check of the table ${table.text}`,
  };
}

/** How to make the table, for the messages of a missing one. */
const HOW_TO_CREATE =
  "apply its schema (schemaSql() of @tenant-integration/token-store-postgres, spec/token-store/postgres/schema.sql) with your migrations, or call ensureSchema(pool) once at start";

/**
 * The typed error of what {@link inspection} found, or `undefined` when the table is this version
 * and the server takes writes.
 */
function refusal(table: TableName, row: Record<string, unknown> | undefined): PostgresStorageError | undefined {
  if (row?.["standby"] === true) {
    return new PostgresStorageError(
      "READ_ONLY",
      `the server is a hot standby (pg_is_in_recovery() is true): the tokens must live on the primary, where every process reads and writes them; give the storage a pool of the primary`,
    );
  }
  if (row?.["read_only"] === true) {
    return new PostgresStorageError(
      "READ_ONLY",
      `the server's transactions are read-only (default_transaction_read_only is on): give the storage a pool of the primary, or a role whose transactions may write`,
    );
  }
  if (row?.["found"] !== true) {
    return new PostgresStorageError("SCHEMA_MISSING", `the table ${table.text} does not exist: ${HOW_TO_CREATE}`);
  }
  const version = row["version"];
  if (version !== SCHEMA_VERSION) {
    const found = typeof version === "string" ? `its comment is ${JSON.stringify(version)}` : "it has no comment";
    return new PostgresStorageError(
      "SCHEMA_MISMATCH",
      `the table ${table.text} is not the kit's (${found}, not ${JSON.stringify(SCHEMA_VERSION)}): it may be another application's table or another version's; give the storage another table name, or migrate this one`,
    );
  }
  return undefined;
}

/**
 * Checks, once per pool and table, that the table is this version and the server takes writes; a
 * check that fails is made again at the next call (after a migration the storage works without a
 * restart).
 */
const checked = new WeakMap<PostgresPoolLike, Map<string, Promise<void>>>();

/**
 * Resolves once the table `table` on `pool` is known to be this version on a writable server.
 *
 * @throws {@link PostgresStorageError} `SCHEMA_MISSING`, `SCHEMA_MISMATCH`, `READ_ONLY`, or
 * `COMMAND_FAILED` when the check itself failed.
 */
export function checkSchema(pool: PostgresPoolLike, table: TableName, timeoutMs: number): Promise<void> {
  const tables = checked.get(pool) ?? new Map<string, Promise<void>>();
  checked.set(pool, tables);
  const known = tables.get(table.sql);
  if (known) return known;
  const check = run(pool, inspection(table), timeoutMs).then((rows) => {
    const refused = refusal(table, rows[0]);
    if (refused) throw refused;
  });
  tables.set(table.sql, check);
  check.catch(() => tables.delete(table.sql));
  return check;
}

/**
 * Creates the table (version {@link SCHEMA_VERSION}, the DDL of {@link schemaSql}) when it does not
 * exist, in one transaction, under an advisory lock so that processes starting together do not race;
 * does nothing when it exists at this version. The only DDL the kit ever runs, and only when called:
 * apps that manage their schema with migrations apply {@link schemaSql} there instead.
 *
 * @returns whether it created the table.
 * @throws {@link PostgresStorageError} `SCHEMA_MISMATCH` (nothing is changed) when a table of that
 * name exists that is not this version; `READ_ONLY` on a standby or a read-only server;
 * `COMMAND_FAILED` when the DDL failed (`cause.code` `42501`: the role may not create tables).
 * @example
 * ```ts
 * import pg from "pg";
 * import { ensureSchema } from "@tenant-integration/token-store-postgres";
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await ensureSchema(pool); // at start: CREATE TABLE tenant_integration_records … unless it exists
 * ```
 * @see spec/token-store/README.md, "PostgreSQL"
 */
export async function ensureSchema(
  pool: PostgresPoolLike,
  options: { table?: string; commandTimeoutMs?: number } = {},
): Promise<{ created: boolean }> {
  const table = tableName(options.table);
  const timeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  let held: Awaited<ReturnType<typeof checkout>>;
  try {
    held = await checkout(pool, timeoutMs);
  } catch (e) {
    throw failure(e, `ensureSchema of ${table.text} (no connection)`, "COMMAND_FAILED");
  }
  const step = (text: string, values?: unknown[]) =>
    query(held, { text, values, what: `ensureSchema of ${table.text}` }, timeoutMs);
  try {
    await step("BEGIN");
    // Two processes creating the table at once would collide in the catalog: one at a time.
    await step("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`tenant-integration:schema:${table.sql}`]);
    const [found] = await step(inspection(table).text, inspection(table).values);
    const refused = refusal(table, found);
    if (refused && refused.code !== "SCHEMA_MISSING") throw refused;
    if (refused) await step(schemaSql({ table: table.text }));
    await step("COMMIT");
    checked.get(pool)?.delete(table.sql);
    return { created: refused !== undefined };
  } catch (e) {
    await step("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    held.release();
  }
}
