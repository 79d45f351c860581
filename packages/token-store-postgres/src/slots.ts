/**
 * How many connections the refresh locks of one process may hold at once, per pool. A lock holds a
 * connection for the whole refresh (its transaction holds the advisory lock) and the refresh writes
 * the tokens on another: were every connection of the pool held by a lock, no write could get one,
 * and every refresh would wait for the others forever. So the locks leave at least one connection of
 * the pool to the writes (and to the app): a refresh beyond the limit waits in the process for a
 * slot, within the lock's bounded wait.
 */
import { PostgresStorageError } from "./errors.js";
import { DEFAULT_POOL_MAX, type PostgresPoolLike } from "./pool.js";

/** The slots of one pool: how many are taken, how many there are, and who waits for one (first come, first served). */
interface Slots {
  limit: number;
  taken: number;
  readonly waiting: (() => void)[];
}

const slotsOf = new WeakMap<PostgresPoolLike, Slots>();

/**
 * The number of lock connections for `pool`: `wanted`, else one less than the pool's size.
 *
 * @throws {@link PostgresStorageError} `INVALID_OPTIONS` for a limit that is not a whole number from 1
 * to the pool's size less one (a pool of one connection cannot hold a lock and write).
 */
export function lockConnections(pool: PostgresPoolLike, wanted: number | undefined): number {
  const max = pool.options?.max ?? DEFAULT_POOL_MAX;
  const limit = wanted ?? max - 1;
  if (!(Number.isInteger(limit) && limit >= 1 && limit < max)) {
    throw new PostgresStorageError(
      "INVALID_OPTIONS",
      `maxLockConnections must be a whole number from 1 to the pool's max less one (the pool's max is ${max}): a refresh holds one connection for its lock and writes the tokens on another, so a pool of ${max} connection${max === 1 ? "" : "s"} needs ${wanted === undefined ? "a max of at least 2" : "a smaller maxLockConnections"}`,
    );
  }
  return limit;
}

/**
 * Takes a lock slot of `pool` (whose limit is `limit`; several locks on one pool share its slots, at
 * the smallest limit any of them asked), waiting at most `timeoutMs`.
 *
 * @returns the function that gives the slot back (idempotent).
 * @throws {@link PostgresStorageError} `LOCK_TIMEOUT` when no slot came free in time.
 */
export async function takeSlot(
  pool: PostgresPoolLike,
  limit: number,
  timeoutMs: number,
  what: string,
): Promise<() => void> {
  const own = slotsOf.get(pool) ?? { limit, taken: 0, waiting: [] };
  slotsOf.set(pool, own);
  own.limit = Math.min(own.limit, limit);
  let given = false;
  const giveBack = () => {
    if (given) return;
    given = true;
    own.taken--;
    if (own.taken < own.limit) own.waiting.shift()?.();
  };
  if (own.taken < own.limit) {
    own.taken++;
    return giveBack;
  }
  await new Promise<void>((resolve, reject) => {
    const turn = () => {
      clearTimeout(timer);
      own.taken++;
      resolve();
    };
    const timer = setTimeout(() => {
      own.waiting.splice(own.waiting.indexOf(turn), 1);
      reject(
        new PostgresStorageError(
          "LOCK_TIMEOUT",
          `${what}: no connection of the pool came free for the lock within ${timeoutMs} ms (this process's other refreshes hold all ${own.limit} the locks may use)`,
        ),
      );
    }, timeoutMs);
    own.waiting.push(turn);
  });
  return giveBack;
}
