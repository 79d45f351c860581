/**
 * The part of a node-postgres pool the storage uses, and how it runs a statement: on a connection
 * checked out for it alone, within a deadline, a connection that failed or did not answer destroyed
 * rather than returned. node-postgres's `Pool` (`pg` 8.x) has it as is.
 */
import { PostgresStorageError, type PostgresStorageErrorCode } from "./errors.js";

/**
 * A connection checked out of the pool: node-postgres's `PoolClient`. The storage attaches its own
 * `error` listener while it holds one (a checked-out client's connection error is otherwise an
 * uncaught `error` event that ends the process), and releases it with an error to have the pool
 * destroy it.
 *
 * @example
 * ```ts
 * import pg from "pg";
 * const client: PostgresClientLike = await new pg.Pool().connect();
 * ```
 * @see https://node-postgres.com/apis/pool#releasing-clients
 */
export interface PostgresClientLike {
  query(config: { text: string; values?: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
  /** Back to the pool; with an error (or `true`), the pool destroys the connection instead. */
  release(destroy?: Error | boolean): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  removeListener(event: "error", listener: (error: Error) => void): unknown;
  /** The server process of this connection (node-postgres's `processID`): named in messages about the lock. */
  readonly processID?: number | null;
}

/**
 * The application's pool: node-postgres's `Pool` (`new pg.Pool({ connectionString })`). The storage
 * only checks connections out (`connect()`) and gives them back; it never ends the pool. `options.max`
 * (the pool's size; node-postgres's default is 10) bounds how many connections the refresh locks of
 * one process may hold at once (see `maxLockConnections`).
 *
 * @example
 * ```ts
 * import pg from "pg";
 * const pool: PostgresPoolLike = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
 * ```
 * @see https://node-postgres.com/apis/pool
 */
export interface PostgresPoolLike {
  connect(): Promise<PostgresClientLike>;
  readonly options?: { readonly max?: number | undefined } | undefined;
}

/** node-postgres's default pool size, assumed when a pool does not say its own. */
export const DEFAULT_POOL_MAX = 10;

/**
 * The default of `commandTimeoutMs`: the same 5 s as the Redis storage's, so a storage that stops
 * answering costs a call the same wait whichever it is.
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

/** What the error of a failed statement is reported with: `LOCK_UNAVAILABLE` for the lock's statements. */
export type FailureCode = "COMMAND_FAILED" | "LOCK_UNAVAILABLE";

/** The deadline ran out: what a statement or a checkout rejects with then, inside this module. */
class Late extends Error {
  override readonly name = "TimeoutError";
}

/**
 * Resolves with `promise`, or rejects with a {@link Late} once `ms` passed; `onLate` then gets what
 * the promise resolves with later (a connection to give back).
 */
export function within<T>(promise: Promise<T>, ms: number, onLate?: (value: T) => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let late = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        late = true;
        reject(new Late(`no answer within ${ms} ms`));
      },
      Math.max(0, ms),
    );
  });
  promise.then(
    (value) => late && onLate?.(value),
    () => {},
  );
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Whether `e` is the deadline of {@link within} running out. */
export const isLate = (e: unknown): boolean => e instanceof Late;

/** A connection held for a task, with the error listener a checked-out connection needs. */
export interface Held {
  readonly client: PostgresClientLike;
  /** The connection's error event (it was terminated, the server went away), once one came. */
  broken(): Error | undefined;
  /** Gives it back to the pool, or, after `destroy` (an error), has the pool destroy it. Idempotent. */
  release(destroy?: unknown): void;
  /** Whether it was given back (or destroyed): nothing more may be sent on it. */
  released(): boolean;
}

/**
 * Checks a connection out of the pool, waiting at most `timeoutMs` (a pool whose every connection is
 * busy queues the request; a server that does not answer never completes a new connection). A
 * connection that comes after the deadline is given back at once, never used.
 */
export async function checkout(pool: PostgresPoolLike, timeoutMs: number): Promise<Held> {
  const client = await within(pool.connect(), timeoutMs, (late) => late.release());
  let broke: Error | undefined;
  const listener = (error: Error) => {
    broke ??= error;
  };
  client.on("error", listener);
  let released = false;
  return {
    client,
    broken: () => broke,
    released: () => released,
    release(destroy) {
      if (released) return;
      released = true;
      client.removeListener("error", listener);
      const error = destroy ?? broke;
      client.release(error === undefined ? undefined : error instanceof Error ? error : new Error(String(error)));
    },
  };
}

/** One statement: its SQL, its parameters, and what a message calls it (`SELECT of <row>`): never a value. */
export interface Statement {
  readonly text: string;
  readonly values?: readonly unknown[] | undefined;
  readonly what: string;
}

/**
 * Runs `statement` on `held` within `timeoutMs`. On no answer the connection is destroyed (the
 * statement may still run once the server answers again; nothing else will be sent on it).
 *
 * @throws {@link PostgresStorageError} as {@link failure} makes it.
 */
export async function query(
  held: Held,
  statement: Statement,
  timeoutMs: number,
  code: FailureCode = "COMMAND_FAILED",
): Promise<Record<string, unknown>[]> {
  try {
    // A connection given back may be another task's by now.
    if (held.released()) throw new Error("the connection was given up (no answer, or lost) before this statement");
    const result = await within(
      held.client.query({ text: statement.text, values: statement.values as unknown[] }),
      timeoutMs,
    );
    return result.rows;
  } catch (e) {
    if (isLate(e) || held.broken() || isConnectionError(e)) held.release(e);
    throw failure(e, statement.what, code);
  }
}

/**
 * Runs one statement on a connection of its own, checked out of `pool` and given back at once:
 * within `timeoutMs` for the checkout and again for the answer. Autocommit: what it writes is
 * committed (durable, seen by every other connection) when it resolves.
 */
export async function run(
  pool: PostgresPoolLike,
  statement: Statement,
  timeoutMs: number,
): Promise<Record<string, unknown>[]> {
  let held: Held;
  try {
    held = await checkout(pool, timeoutMs);
  } catch (e) {
    throw failure(e, `${statement.what} (no connection)`, "COMMAND_FAILED");
  }
  try {
    return await query(held, statement, timeoutMs);
  } finally {
    held.release();
  }
}

/** Connection-level failures of node-postgres and of the socket: the connection is no longer usable. */
function isConnectionError(e: unknown): boolean {
  const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && /^(E[A-Z]+|57P0[1-3]|08\d\d\d)$/.test(code)) return true;
  return (
    typeof message === "string" &&
    /Connection terminated|not queryable|Client has encountered a connection error/i.test(message)
  );
}

/** Why a statement failed, in words, from the driver's error (its SQLSTATE, a socket error code). */
function reason(e: unknown): { code: PostgresStorageErrorCode | undefined; why: string } {
  if (isLate(e)) return { code: undefined, why: (e as Error).message };
  const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
  const sqlstate = typeof code === "string" ? code : "";
  const said = typeof message === "string" ? message : String(e);
  switch (sqlstate) {
    case "42P01":
      return { code: "SCHEMA_MISSING", why: `the table does not exist (${said}, 42P01)` };
    case "42703":
    case "42804":
    case "23502":
      return { code: "SCHEMA_MISMATCH", why: `the table is not this kit's (${said}, ${sqlstate})` };
    case "25006":
      return {
        code: "READ_ONLY",
        why: `the server refuses writes (${said}, 25006): it is a hot standby or read-only by default; give the storage the primary`,
      };
    case "57014":
      return {
        code: undefined,
        why: `the server cancelled it: statement_timeout, or pg_cancel_backend (${said}, 57014)`,
      };
    case "42501":
      return { code: undefined, why: `${said} (42501): grant SELECT, INSERT, UPDATE and DELETE on the table` };
    case "ECONNREFUSED":
      return { code: undefined, why: "PostgreSQL could not be reached (connection refused)" };
  }
  if (isConnectionError(e)) return { code: undefined, why: `the connection was lost (${said})` };
  return { code: undefined, why: sqlstate ? `${said} (${sqlstate})` : said };
}

/**
 * The driver's error without what may hold a value: a PostgreSQL error's `detail` and `where` can
 * quote a row (a constraint's "Failing row contains (…)"), and a row holds refresh tokens. Kept: the
 * class name, the SQLSTATE (`code`), the message, the severity.
 */
function withoutValues(e: unknown): unknown {
  if (!(e instanceof Error)) return e;
  const { code, severity } = e as { code?: unknown; severity?: unknown };
  if (!("detail" in e || "where" in e)) return e;
  const copy = new Error(e.message) as Error & { code?: unknown; severity?: unknown };
  copy.name = e.name;
  copy.code = code;
  copy.severity = severity;
  return copy;
}

/**
 * A {@link PostgresStorageError} for a statement (`what`) that failed with `e`: `SCHEMA_MISSING`,
 * `SCHEMA_MISMATCH` or `READ_ONLY` when the server's SQLSTATE says so, else `code`
 * (`COMMAND_FAILED`, or the lock's `LOCK_UNAVAILABLE`), the message saying why.
 */
export function failure(e: unknown, what: string, code: FailureCode): PostgresStorageError {
  if (e instanceof PostgresStorageError) return e;
  const { code: specific, why } = reason(e);
  return new PostgresStorageError(specific ?? code, `${what} failed: ${why}`, withoutValues(e));
}
