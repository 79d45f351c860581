/**
 * The refresh lock on PostgreSQL: a transaction-scoped advisory lock on the lock's name, held in a
 * transaction on a connection checked out of the app's pool for the whole refresh. The server
 * releases it when the transaction ends: at the release, or when the holder's connection closes (the
 * holder was killed, its machine vanished past the TCP keepalives). A holder that is paused but lives
 * keeps it. Waiters block in the server in short slices, so a release wakes them all at once.
 *
 * @see spec/token-store/README.md, "PostgreSQL: the refresh lock"; RFC 9700 §4.14.2
 */
import { TokenManagerError, type HeldLock, type Lock, type LockWaitOptions } from "@tenant-integration/token-manager";
import { PostgresStorageError } from "./errors.js";
import {
  checkout,
  DEFAULT_COMMAND_TIMEOUT_MS,
  failure,
  isLate,
  query,
  type Held,
  type PostgresPoolLike,
  type Statement,
} from "./pool.js";
import { lockConnections, takeSlot } from "./slots.js";

/**
 * Options of {@link postgresLock} (and of `postgresStorage`, which passes them on). All are optional.
 *
 * @example
 * ```ts
 * const options: PostgresLockOptions = { waitTimeoutMs: 60_000, keepalives: { idleSeconds: 5, intervalSeconds: 2, count: 3 } };
 * ```
 * @see RFC 9700 §4.14.2
 */
export interface PostgresLockOptions {
  /**
   * How long to wait for a lock another process holds before giving up with `LOCK_TIMEOUT`, in
   * milliseconds (default 45 000: longer than the token manager's slowest refresh, three attempts of
   * 10 s with backoff, so a live holder is waited for). A holder that is paused keeps its lock: its
   * waiters fail with `LOCK_TIMEOUT` after this long, and send nothing.
   */
  waitTimeoutMs?: number;
  /**
   * How long each wait blocks in the server (`lock_timeout`) before the token manager is asked
   * whether to go on waiting (another process may have stored fresh tokens), in milliseconds
   * (default 250). A release wakes the waiters at once, whatever the slice.
   */
  waitSliceMs?: number;
  /**
   * How long to wait for each statement's answer (and for a connection from the pool), in
   * milliseconds (default 5 000). A server that stops answering with its connections open then fails
   * a call with `STORAGE_FAILED` (cause `LOCK_UNAVAILABLE`) instead of blocking it for the outage.
   */
  commandTimeoutMs?: number;
  /**
   * How many connections of the pool this process's refresh locks may hold at once (default: the
   * pool's `max` less one). A lock holds one for the whole refresh and the tokens are written on
   * another, so the locks must leave the writes at least one. Locks on one pool share this limit.
   */
  maxLockConnections?: number;
  /**
   * The server's TCP keepalives on the lock's connection while it holds the lock
   * (`tcp_keepalives_idle`, `_interval`, `_count`, for that transaction only): a holder whose machine
   * vanished is found dead, and its lock released, after about `idleSeconds + intervalSeconds ×
   * count` (default 10 + 5 × 3 = 25 s), while a paused process, whose kernel still answers them,
   * keeps it. `false` leaves the server's settings (often the system's two hours).
   */
  keepalives?: { idleSeconds: number; intervalSeconds: number; count: number } | false;
}

/** The options, checked, with their defaults. */
interface LockSettings {
  readonly waitTimeoutMs: number;
  readonly waitSliceMs: number;
  readonly commandTimeoutMs: number;
  readonly maxLockConnections: number;
  readonly keepalives: PostgresLockOptions["keepalives"];
}

const DEFAULT_KEEPALIVES = { idleSeconds: 10, intervalSeconds: 5, count: 3 };

/** The wait for the lock ended because its `until` check said so: the task did not run (the file and Redis locks' twin). */
class LockWaitEnded extends Error {
  override readonly name = "LockWaitEnded";
  readonly code = "LOCK_WAIT_ENDED";
  constructor(name: string) {
    super(`the wait for the lock ${name} ended: no longer needed`);
  }
}

/**
 * A lock statement's failure, as the token manager's `STORAGE_FAILED` (the code a failed read or
 * write of the storage gets, so an outage is one code at every step), the store's error as `cause`.
 */
function storageFailed(error: PostgresStorageError): TokenManagerError {
  const reason = error.message.slice(`${error.code}: `.length);
  return new TokenManagerError("STORAGE_FAILED", `STORAGE_FAILED: ${reason}`, error);
}

/** Checks that `value` is a finite number > 0 and returns it. */
function positive(name: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0))
    throw new PostgresStorageError("INVALID_OPTIONS", `${name} must be a finite number > 0`);
  return value;
}

/**
 * Checks the options of a lock on `pool` and fills in their defaults.
 *
 * @throws {@link PostgresStorageError} `INVALID_OPTIONS`, saying which.
 */
export function lockSettings(pool: PostgresPoolLike, options: PostgresLockOptions): LockSettings {
  const keepalives = options.keepalives ?? DEFAULT_KEEPALIVES;
  if (keepalives !== false) {
    const { idleSeconds, intervalSeconds, count } = keepalives;
    if (![idleSeconds, intervalSeconds, count].every((n) => Number.isInteger(n) && n > 0)) {
      throw new PostgresStorageError(
        "INVALID_OPTIONS",
        "keepalives must be false, or whole numbers > 0: { idleSeconds, intervalSeconds, count }",
      );
    }
  }
  return {
    waitTimeoutMs: positive("waitTimeoutMs", options.waitTimeoutMs ?? 45_000),
    waitSliceMs: Math.ceil(positive("waitSliceMs", options.waitSliceMs ?? 250)),
    commandTimeoutMs: positive("commandTimeoutMs", options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS),
    maxLockConnections: lockConnections(pool, options.maxLockConnections),
    keepalives,
  };
}

/** The advisory lock's key: a 64-bit hash of the lock's name, computed by the server (every kit sends the same SQL). */
const KEY = "hashtextextended($1, 0)";

/**
 * The first statement of the lock's transaction: its settings (for this transaction only), whether
 * the server takes writes (a lock on a standby would coordinate nobody), and a first try of the lock.
 */
function opening(name: string, settings: LockSettings): Statement {
  const values: unknown[] = [name, `${settings.waitSliceMs}ms`];
  let set = "set_config('lock_timeout', $2, true)";
  if (settings.keepalives) {
    const { idleSeconds, intervalSeconds, count } = settings.keepalives;
    values.push(String(idleSeconds), String(intervalSeconds), String(count));
    set += `, set_config('tcp_keepalives_idle', $3, true), set_config('tcp_keepalives_interval', $4, true),
      set_config('tcp_keepalives_count', $5, true)`;
  }
  return {
    text: `SELECT ${set}, pg_is_in_recovery() AS standby, current_setting('transaction_read_only') = 'on' AS read_only,
      pg_try_advisory_xact_lock(${KEY}) AS taken`,
    values,
    what: `taking the lock ${name}`,
  };
}

/** The holder of the lock `name`, for the message of a wait that ran out: its server process, application, client and since when. */
async function holderOf(held: Held, name: string, timeoutMs: number): Promise<string> {
  try {
    const [row] = await query(
      held,
      {
        text: `SELECT l.pid, a.application_name, host(a.client_addr) AS client, a.xact_start
          FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.mode = 'ExclusiveLock' AND l.granted AND l.objsubid = 1
            AND l.classid::bigint = (${KEY} >> 32) & 4294967295 AND l.objid::bigint = ${KEY} & 4294967295`,
        values: [name],
        what: `finding the holder of ${name}`,
      },
      timeoutMs,
    );
    if (!row) return "";
    const app = row["application_name"] ? `, application_name ${JSON.stringify(row["application_name"])}` : "";
    const client = row["client"] ? `, client ${String(row["client"])}` : "";
    const since =
      row["xact_start"] instanceof Date ? `, its transaction open since ${row["xact_start"].toISOString()}` : "";
    return ` by the server process ${String(row["pid"])}${app}${client}${since}`;
  } catch {
    return "";
  }
}

/**
 * One slice of the wait: blocks in the server until the holder lets go or `lock_timeout` passes,
 * holding nothing after it. It waits for the lock in SHARE mode (`pg_advisory_xact_lock_shared`),
 * which conflicts with the holder's exclusive lock only, so a release wakes every waiter at once;
 * the share is let go at once (`ROLLBACK TO SAVEPOINT`, which ends the locks taken after it). Each
 * waiter then asks whether it still needs the lock (the stored record is fresh now, in the common
 * case) and only then tries the exclusive lock. Waiting for the exclusive lock itself would make a
 * convoy: the server grants it to the waiters one after another, each holding it for a read and a
 * release before the next may go, so a fleet's last waiter waits for all the others' round trips.
 *
 * @returns whether the holder let go within the slice (else the slice ran out).
 */
async function waitSlice(held: Held, name: string, settings: LockSettings): Promise<boolean> {
  const what = `waiting for the lock ${name}`;
  const step = (text: string, values?: unknown[], timeoutMs = settings.commandTimeoutMs) =>
    query(held, { text, values, what }, timeoutMs, "LOCK_UNAVAILABLE");
  await step("SAVEPOINT tenant_integration_wait");
  let released = true;
  try {
    await step(`SELECT pg_advisory_xact_lock_shared(${KEY})`, [name], settings.waitSliceMs + settings.commandTimeoutMs);
  } catch (e) {
    // 55P03: lock_timeout ran out; 57014: a statement_timeout shorter than the slice did. Either way
    // the lock is still another's.
    const sqlstate = (e as PostgresStorageError).cause as { code?: unknown } | undefined;
    if (sqlstate?.code !== "55P03" && sqlstate?.code !== "57014") throw e;
    released = false;
  }
  await step("ROLLBACK TO SAVEPOINT tenant_integration_wait");
  return released;
}

/** Tries the exclusive lock without waiting. */
async function tryTake(held: Held, name: string, settings: LockSettings): Promise<boolean> {
  const [row] = await query(
    held,
    { text: `SELECT pg_try_advisory_xact_lock(${KEY}) AS taken`, values: [name], what: `taking the lock ${name}` },
    settings.commandTimeoutMs,
    "LOCK_UNAVAILABLE",
  );
  return row?.["taken"] === true;
}

/**
 * A short random pause after a try that lost to other waiters woken with it: they let their shares
 * go within a round trip, and the next slice, which no exclusive holder blocks, would not wait.
 */
const backOff = () => new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));

/**
 * Checks a connection out, opens the lock's transaction and takes the lock, waiting in slices until
 * it is granted, `until` says the wait is no longer needed, or the deadline passes.
 *
 * @returns the connection, its transaction holding the lock.
 */
async function acquire(
  pool: PostgresPoolLike,
  name: string,
  settings: LockSettings,
  deadline: number,
  until: LockWaitOptions["until"],
): Promise<Held> {
  let held: Held;
  try {
    held = await checkout(pool, Math.min(settings.commandTimeoutMs, Math.max(1, deadline - performance.now())));
  } catch (e) {
    throw failure(e, `taking the lock ${name} (no connection)`, "LOCK_UNAVAILABLE");
  }
  try {
    await query(
      held,
      { text: "BEGIN", what: `taking the lock ${name}` },
      settings.commandTimeoutMs,
      "LOCK_UNAVAILABLE",
    );
    const [opened] = await query(held, opening(name, settings), settings.commandTimeoutMs, "LOCK_UNAVAILABLE");
    if (opened?.["standby"] === true || opened?.["read_only"] === true) {
      throw new PostgresStorageError(
        "READ_ONLY",
        `taking the lock ${name}: the server ${opened["standby"] === true ? "is a hot standby" : "is read-only (default_transaction_read_only)"}; a lock there would coordinate nobody: give the storage a pool of the primary`,
      );
    }
    if (opened?.["taken"] === true) return held;
    for (;;) {
      const released = await waitSlice(held, name, settings);
      if (until && (await until())) throw new LockWaitEnded(name);
      if (await tryTake(held, name, settings)) return held;
      if (released) await backOff();
      if (performance.now() >= deadline) {
        const holder = await holderOf(held, name, settings.commandTimeoutMs);
        throw new PostgresStorageError(
          "LOCK_TIMEOUT",
          `the lock ${name} (the advisory lock hashtextextended of that name) was still held${holder} after ${settings.waitTimeoutMs} ms`,
        );
      }
    }
  } catch (e) {
    await end(held, settings.commandTimeoutMs);
    throw e;
  }
}

/**
 * Ends the lock's transaction (ROLLBACK: nothing was written in it), which releases the lock, and
 * gives the connection back. A connection that fails or does not answer is destroyed instead: the
 * server ends its transaction, and releases the lock, when the connection closes.
 */
async function end(held: Held, timeoutMs: number): Promise<void> {
  if (held.released()) return;
  try {
    await query(held, { text: "ROLLBACK", what: "releasing the lock" }, timeoutMs, "LOCK_UNAVAILABLE");
    held.release();
  } catch (e) {
    held.release(e);
  }
}

/**
 * "The lock is still held" (the refresh protocol's steps 3 and 5): the lock's transaction is still
 * open, that is, its connection still answers. `false` once the connection was lost (the server
 * restarted, the backend was terminated, `idle_in_transaction_session_timeout` ended it): the server
 * released the lock then.
 *
 * @throws the token manager's `STORAGE_FAILED` when no answer came within `timeoutMs` (the lock's
 * fate is unknown; the connection is destroyed, which releases it).
 */
async function stillHeld(held: Held, name: string, timeoutMs: number): Promise<boolean> {
  if (held.released() || held.broken()) return false;
  try {
    await query(held, { text: "SELECT 1", what: `checking the lock ${name}` }, timeoutMs, "LOCK_UNAVAILABLE");
    return true;
  } catch (e) {
    const error = e as PostgresStorageError;
    if (isLate(error.cause) || error.code !== "LOCK_UNAVAILABLE") throw storageFailed(error);
    held.release(error);
    return false;
  }
}

/**
 * Creates a {@link Lock} on PostgreSQL over the app's node-postgres pool. Each call checks a
 * connection out (at most `maxLockConnections` at once per pool), opens a transaction and takes the
 * transaction-scoped advisory lock of the lock's name (`pg_advisory_xact_lock(hashtextextended(name,
 * 0))`), waiting in slices of `waitSliceMs` in the server for the holder to let go (in SHARE mode,
 * so that a release wakes every waiter at once), then running the token manager's `until` check,
 * then trying the lock, until `waitTimeoutMs`; runs the task;
 * then ends the transaction, which releases the lock, and gives the connection back. The task gets a
 * `HeldLock` whose `isHeld()` asks that connection (`SELECT 1` in the transaction): the token manager
 * asks right before a refresh request leaves, and sends nothing when the lock is gone.
 *
 * Nothing is written in the lock's transaction: the storage writes the intent and the tokens on
 * other connections, committed at once, so they are durable before the request leaves and survive
 * the lock's end. `postgresStorage` carries one, so most apps never call this.
 *
 * Works through PgBouncer in transaction mode (a transaction keeps its server connection); a
 * session-level advisory lock would not. See the README, "Poolers".
 *
 * @throws {@link PostgresStorageError} `INVALID_OPTIONS` at once for a bad option, or a pool whose
 * `max` is 1. The returned lock rejects with `LOCK_TIMEOUT` (a `PostgresStorageError` naming the
 * holder's server process) when the wait runs out; with the token manager's `TokenManagerError`
 * `STORAGE_FAILED` (cause: a `PostgresStorageError` `LOCK_UNAVAILABLE` saying which statement failed
 * and why, or `READ_ONLY` for a standby) when PostgreSQL fails or does not answer while the lock is
 * taken or checked; or with the task's own error.
 * @example
 * ```ts
 * import pg from "pg";
 * import { postgresLock } from "@tenant-integration/token-store-postgres";
 *
 * const lock = postgresLock(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 * await lock("tenant-integration:https://acme.tenant.test:demo:lock", async () => refreshOnce());
 * ```
 * @see RFC 9700 §4.14.2 (a reused refresh token revokes the family), RFC 6749 §6;
 * https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS
 */
export function postgresLock(pool: PostgresPoolLike, options: PostgresLockOptions = {}): Lock {
  return lockOn(pool, lockSettings(pool, options));
}

/** The lock of {@link postgresLock} with its settings checked. */
export function lockOn(pool: PostgresPoolLike, settings: LockSettings): Lock {
  return async (name, task, wait) => {
    const deadline = performance.now() + settings.waitTimeoutMs;
    const giveBack = await takeSlot(pool, settings.maxLockConnections, settings.waitTimeoutMs, `the lock ${name}`);
    let held: Held;
    try {
      held = await acquire(pool, name, settings, deadline, wait?.until);
    } catch (e) {
      giveBack();
      throw e instanceof PostgresStorageError && e.code !== "LOCK_TIMEOUT" ? storageFailed(e) : e;
    }
    const lock: HeldLock = { isHeld: () => stillHeld(held, name, settings.commandTimeoutMs) };
    try {
      return await task(lock);
    } finally {
      await end(held, settings.commandTimeoutMs);
      giveBack();
    }
  };
}
