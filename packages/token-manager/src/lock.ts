/**
 * Locks that make one refresh out of many: within a process, and across browser tabs (Web Locks).
 *
 * @see OAuth 2.0 Security BCP (RFC 9700) §4.14.2 (refresh token rotation)
 */

/**
 * What a lock tells its task about the lock it holds: whether it is still the task's own. A holder
 * that was paused (SIGSTOP, a suspended laptop, a long GC pause) may find its lock taken over by
 * another process when it wakes; the token manager asks right before a refresh request leaves, and
 * sends nothing when the answer is no.
 *
 * @example
 * ```ts
 * const lock: Lock = (name, task) => myLock.run(name, () => task({ isHeld: () => myLock.stillMine(name) }));
 * ```
 * @see RFC 9700 §4.14.2 (a refresh token presented twice revokes the family)
 */
export interface HeldLock {
  /** Resolves `true` while the lock is still this task's own (a fresh check, not a cached flag), `false` once another holder has it or it is gone. */
  isHeld(): Promise<boolean>;
}

/**
 * Thrown inside the lock when it was found no longer held right before a refresh would leave (its
 * holder was paused and another took it over): nothing was sent; the manager takes the lock again.
 */
export class LockLost extends Error {}

/**
 * Runs `task` while holding the lock called `name`, and resolves or rejects with its result.
 * Implement it to coordinate through something else (a file lock, a database row). A lock that can
 * tell whether it is still held passes a {@link HeldLock} to the task (the file and Redis locks do);
 * without one, the manager cannot detect a lock taken over while its holder was paused.
 */
export type Lock = <T>(name: string, task: (held?: HeldLock) => Promise<T>, options?: LockWaitOptions) => Promise<T>;

/**
 * What a caller tells a lock about its wait (a lock may ignore it: the wait then ends only with the
 * lock). The file lock honours it.
 *
 * @example
 * ```ts
 * await lock(name, refreshOnce, { until: async () => fresh(await storage.get(key)) });
 * ```
 * @see RFC 9700 §4.14.2
 */
export interface LockWaitOptions {
  /**
   * Checked each time a waiting lock wakes (the storage beside it changed, or a short poll), before it
   * tries the lock again. When it resolves `true`, the wait ends without the lock: the lock rejects
   * (with any error) and `task` never runs. The token manager passes one that re-reads the tokens, so a
   * process stops waiting once another has stored fresh ones. It must not throw.
   */
  until?: () => Promise<boolean>;
  /**
   * The session id, when the lock is a session's (spec/token-store/README.md, "Locks"): a storage
   * that keeps many sessions in one place gives each session's lock its own (`fileStorage`: the
   * directory `<file>.<h>.refresh.lock`), so that one session's refresh never waits for another's.
   * The lock's name alone cannot say it (a client id may hold `:`).
   */
  sessionId?: string;
}

/**
 * The part of the Web Locks API (`navigator.locks`) that the manager uses: {@link webLock}, and the
 * markers of rotated-away records (`ifAvailable`, whose task gets `null` when the lock is held).
 */
export interface LockManagerLike {
  request<T>(
    name: string,
    options: { signal?: AbortSignal; steal?: boolean; ifAvailable?: boolean },
    task: (lock?: unknown) => T | Promise<T>,
  ): Promise<T>;
}

/**
 * A lock on Web Locks, shared by every tab and worker of the origin. The wait is bounded: after
 * `timeoutMs` the lock is taken with `{ steal: true }`, so a holder that hangs (or was frozen) cannot
 * block the others forever.
 *
 * @example
 * ```ts
 * const lock = webLock(navigator.locks, 20_000); // what createTokenManager uses in browsers
 * await lock("tenant-integration:https://acme.tenant.test:demo:lock", refreshOnce);
 * ```
 * @see https://w3c.github.io/web-locks/ (steal, signal)
 */
export function webLock(locks: LockManagerLike, timeoutMs = 20_000): Lock {
  return (name, task) => {
    let started: unknown;
    const run = () => ((started = 1), task());
    return locks.request(name, { signal: AbortSignal.timeout(timeoutMs) }, run).catch((e) => {
      // Only a wait that timed out is retried; an error of the task itself propagates.
      if (started) throw e;
      return locks.request(name, { steal: true }, run);
    });
  };
}

/**
 * A lock within one JavaScript realm: tasks with the same name run one after another. Used when
 * `navigator.locks` is absent (Node 20, older runtimes).
 *
 * @example
 * ```ts
 * const lock = processLock(); // what createTokenManager uses without navigator.locks
 * await Promise.all([lock("a", task1), lock("a", task2)]); // task2 starts after task1 settles
 * ```
 * @see RFC 6749 §6
 */
export function processLock(): Lock {
  const tails = new Map<string, Promise<unknown>>();
  return (name, task) => {
    // One settled tail per name (a manager uses one name), so the map stays as small as the names.
    const run = Promise.resolve(tails.get(name)).then(() => task());
    tails.set(
      name,
      run.catch(() => {}),
    );
    return run;
  };
}
