import type { Lock } from "../lock.js";
import type { RefreshIntents } from "../refresh-intent.js";

/**
 * Who this process is, and whether another one is gone: what a storage shared by processes gives the
 * manager so that a refresh intent names its holder (pid and host) and a process that finds the
 * intent of a holder on the same host that has exited (`kill(pid, 0)` fails with ESRCH) does not wait
 * for it. `fileStorage` and `redisStorage` carry one (Node's `processIdentity()`).
 *
 * @example
 * ```ts
 * const identity: ProcessIdentity = { host: "build-7", pid: 4242, gone: (host, pid) => host === "build-7" && !alive(pid) };
 * ```
 * @see RFC 9700 §4.14.2
 */
export interface ProcessIdentity {
  /** This machine's host name. */
  readonly host: string;
  /** This process's id. */
  readonly pid: number;
  /** `true` only when `pid` is on this host and has exited; `false` when it is alive, or on another host (unknowable). */
  gone(host: string, pid: number): boolean;
}

/**
 * The storage interface: three async methods over string keys and string values, and two optional
 * ones for pending sign-ins (`setExpiring`, `take`). The manager stores one JSON record per key (the
 * tokens, the refresh intent, each pending sign-in), so a store needs no schema.
 *
 * Values are secrets (they hold refresh tokens): a store must not log them.
 *
 * @example
 * ```ts
 * const storage: TokenStorage = {
 *   async get(key) { return db.read(key); },
 *   async set(key, value) { await db.write(key, value); },
 *   async delete(key) { await db.remove(key); },
 * };
 * ```
 * @see RFC 6749 §10.3, §10.4 (tokens kept confidential)
 */
export interface TokenStorage {
  /**
   * The lock that coordinates refreshes among everyone sharing this storage (a lock file beside a
   * token file, a Redis lease). `createTokenManager` uses it unless its `lock` option is given, so a
   * storage shared across processes or machines brings the lock that makes one refresh out of many.
   *
   * @see RFC 9700 §4.14.2 (refresh token rotation)
   */
  readonly lock?: Lock;
  /**
   * The refresh intents (see the README, "Paused processes"), which a storage with a `lock` must
   * carry beside it: `createTokenManager` refuses a lock that processes share without them
   * (`INVALID_OPTIONS`). `fileStorage`, `redisStorage` and `postgresStorage` carry them; a storage of
   * your own sets `refreshIntents` (imported from `@tenant-integration/token-manager`). Imported only by
   * the storages that need them, so a browser app on `webStorage` bundles none of their code.
   *
   * @example
   * ```ts
   * import { refreshIntents, type TokenStorage } from "@tenant-integration/token-manager";
   * const storage: TokenStorage = { get, set, delete: remove, lock: databaseLock, refreshIntents };
   * ```
   * @see RFC 9700 §4.14.2
   */
  readonly refreshIntents?: RefreshIntents;
  /**
   * Set by a storage that every tab of a browser shares (`webStorage(localStorage)` sets
   * `webStorage(sessionStorage)`): a storage of this tab alone. `createTokenManager` keeps the pending
   * sign-in there unless its `pendingStorage` option is given, so that two tabs signing in at once
   * each keep their own; and, the tokens being shared, the managers of the tabs tell each other of
   * sign-ins and sign-outs (see `TokenManagerEvents`). A storage of your own that the tabs share
   * (IndexedDB, say) can set it too.
   *
   * @see RFC 6749 §10.12 (state bound to the user agent's session)
   */
  readonly tabStorage?: TokenStorage;
  /**
   * Who this process is, for the refresh intent the manager stores before a refresh leaves (see the
   * README, "Paused processes"). Set by storages that processes share (`fileStorage`, `redisStorage`).
   */
  readonly processIdentity?: ProcessIdentity;
  /**
   * Where a user finds the value of `key` in this storage, for the manager's messages: the Redis key
   * (`redisStorage`: prefix and hash tag included, as `redis-cli` shows it), the row of a table. A
   * storage without it is named by the key itself.
   *
   * @example
   * ```ts
   * storage.where?.("tenant-integration:https://acme.tenant.test:demo:tokens");
   * // "billing:tenant-integration:{https://acme.tenant.test:demo}:tokens" with redisStorage(client, { prefix: "billing:" })
   * ```
   */
  where?(key: string): string;
  /**
   * Reads a value; `null` or `undefined` when absent. A storage that finds its data unreadable may
   * set it aside and reject with an error whose `reset` is `true` (as `fileStorage` does with a
   * corrupt file): the manager then treats the tokens as absent and reports `NOT_SIGNED_IN` with that
   * error as `cause`.
   */
  get(key: string): Promise<string | null | undefined>;
  /** Writes a value. Must resolve only once the value is durable (the manager awaits it). */
  set(key: string, value: string): Promise<void>;
  /** Removes a value; resolves also when it was absent. */
  delete(key: string): Promise<void>;
  /**
   * Optional: writes a value that the storage drops once `lifetimeMs` milliseconds have passed,
   * without a scan of every key (Redis: `SET … PX`). The manager keeps each pending sign-in with it;
   * without it, with `set`, and a sign-in begun and never completed stays until the app removes it
   * (its own expiry still refuses it). Clean-up only: the record's `expiresAt` decides at the callback.
   *
   * @see spec/token-store/README.md, "What a storage offers"
   */
  setExpiring?(key: string, value: string, lifetimeMs: number): Promise<void>;
  /**
   * Optional: returns the value of `key` and deletes it in one atomic step: of any number of
   * concurrent takes of one key, in any processes sharing the storage, at most one returns it
   * (Redis: `GETDEL`). The manager takes each pending sign-in with it at the callback; without it,
   * with `get` then `delete`, which is not atomic: two callbacks of one state arriving at once may
   * both exchange the code, and the tenant may then revoke the tokens of both (RFC 6749 §4.1.2). A
   * storage that several processes share needs it.
   *
   * @see spec/token-store/README.md, "What a storage offers"; RFC 6749 §4.1.2
   */
  take?(key: string): Promise<string | null | undefined>;
}
