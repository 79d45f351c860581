/**
 * Token storage on Redis (or Valkey), carrying its refresh lock.
 *
 * @see RFC 6749 §10.4 (refresh tokens), RFC 9700 §4.14.2 (rotation)
 */
import { type Lock, type RefreshIntents, refreshIntents, type TokenStorage } from "@tenant-integration/token-manager";
import { processIdentity } from "@tenant-integration/token-manager/node";
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  type RedisClientLike,
  type RedisClusterLike,
  script,
  send,
  text,
} from "./client.js";
import { RedisStorageError } from "./errors.js";
import { checkPrefix, redisKey } from "./keys.js";
import { clusterClient, lockOn, singleServer, type RedisLockOptions } from "./lock.js";

/**
 * Options of {@link redisStorage}: the lock's, plus replica acknowledgement.
 *
 * @example
 * ```ts
 * const options: RedisStorageOptions = { prefix: "billing-app:", replicas: { count: 1, timeoutMs: 500 } };
 * ```
 * @see RFC 6749 §10.4; https://redis.io/docs/latest/commands/wait/
 */
export interface RedisStorageOptions extends RedisLockOptions {
  /**
   * After each write (`SET`, `DEL`), wait with `WAIT` until `count` replicas acknowledged it, at most
   * `timeoutMs` (> 0; `WAIT` with 0 blocks forever); fewer is a `REPLICATION_TIMEOUT` error (the token manager then reports
   * `STORAGE_FAILED` and keeps the new tokens in memory to write again). Default: no `WAIT`, a write
   * resolves once the primary acknowledged it. `WAIT` narrows, and does not close, the window in
   * which a failover loses a rotated refresh token (see the README).
   */
  replicas?: { count: number; timeoutMs: number };
}

/**
 * A {@link TokenStorage} whose `lock` is always there: what {@link redisStorage} returns.
 *
 * @example
 * ```ts
 * const storage: RedisTokenStorage = redisStorage(client);
 * await storage.lock("tenant-integration:https://acme.tenant.test:demo:lock", async () => {});
 * ```
 * @see RFC 9700 §4.14.2
 */
export interface RedisTokenStorage extends TokenStorage {
  /** The Redis lock on `prefix + name`, which `createTokenManager` uses unless given its own `lock`. */
  readonly lock: Lock;
  /** The refresh intents the manager writes beside that lock (the token manager's README, "Paused processes"). */
  readonly refreshIntents: RefreshIntents;
  /**
   * The Redis key of the manager's `name`, as `redis-cli` shows it (prefix and hash tag included):
   * the key the manager's messages name.
   */
  where(name: string): string;
}

/**
 * Stores the token manager's records in Redis, one string key per record, and brings the Redis
 * lock that makes one refresh out of many across every process sharing the Redis. Keys are the
 * manager's own names, which name the tenant origin and the client, with the session part in a
 * hash tag, after `prefix`: `<prefix>tenant-integration:{<origin>:<clientId>}:tokens` (and `:pending`,
 * `:intent`, `:lock`; the same keys as on a cluster, see {@link redisClusterStorage}). Values are the
 * manager's JSON strings, stored as they are and never logged.
 *
 * `get` is `GET`, `set` is `SET` (resolving once Redis acknowledged it, and with `replicas` once
 * replicas did too), `delete` is `DEL`. Keys have no expiry: a refresh token outlives any access
 * token, and the manager deletes what it no longer needs. Pending sign-ins, one key each
 * (`…{<origin>:<clientId>}:pending:<key>`), are written with `setExpiring` (`SET … PX`: Redis drops
 * an abandoned one) and taken with `take` (`GETDEL`, or a script doing the same before Redis 6.2),
 * so of two callbacks of one state in any processes at most one gets it.
 *
 * Each command waits for its reply at most `commandTimeoutMs` (default 5 000; `WAIT` also its own
 * `replicas.timeoutMs`), so a Redis that stops answering with its connections open fails a call
 * instead of blocking it for the whole outage.
 *
 * @throws {@link RedisStorageError} `INVALID_OPTIONS` at once for a bad option, a prefix holding `{` or
 * `}`, or a Redis Cluster client (use {@link redisClusterStorage}). Its methods reject with
 * `COMMAND_FAILED` (cause: the client's error, or a `TimeoutError` when no reply came within
 * `commandTimeoutMs`), `UNEXPECTED_REPLY` or `REPLICATION_TIMEOUT`; the token manager turns those
 * into `STORAGE_FAILED`.
 * @example
 * ```ts
 * import { createClient } from "redis";
 * import { createTokenManager } from "@tenant-integration/token-manager";
 * import { redisStorage } from "@tenant-integration/token-store-redis";
 *
 * const client = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
 * const tm = createTokenManager({
 *   baseUrl: "https://acme.tenant.test",
 *   clientId: "demo-integration",
 *   redirectUri: "https://app.example.org/callback",
 *   scopes: ["profile:read"],
 *   storage: redisStorage(client),
 * });
 * ```
 * @see RFC 6749 §6, §10.4; RFC 9700 §4.14.2
 */
export function redisStorage(client: RedisClientLike, options: RedisStorageOptions = {}): RedisTokenStorage {
  return storageOn(singleServer(client, "redisStorage", "redisClusterStorage"), options);
}

/**
 * {@link redisStorage} on a Redis Cluster (or Valkey cluster), with its {@link redisClusterLock}:
 * the same keys, values and lock. The keys of one session share a hash tag
 * (`tenant-integration:{<origin>:<clientId>}:<kind>`), so they live in one slot on one node; each
 * command goes to that slot's primary (node-redis follows MOVED and ASK while a slot moves), and
 * `replicas` (`WAIT`) is asked of the node that took the write.
 *
 * @throws {@link RedisStorageError} `INVALID_OPTIONS` at once for a bad option, a prefix holding `{`
 * or `}`, or a client that is not a cluster client (use {@link redisStorage}). Its methods reject as
 * {@link redisStorage}'s; a cluster that is down, or has no node serving the session's slot, is
 * `COMMAND_FAILED` (the token manager's `STORAGE_FAILED`), and nothing stored is lost.
 * @example
 * ```ts
 * import { createCluster } from "redis";
 * import { redisClusterStorage } from "@tenant-integration/token-store-redis";
 *
 * const cluster = await createCluster({
 *   rootNodes: [{ url: "redis://127.0.0.1:7000" }],
 *   topologyRefreshOnReconnectionAttemptStrategy: 250, // reach a failover's new primary in time
 * }).connect();
 * const storage = redisClusterStorage(cluster, { prefix: "billing-app:" });
 * ```
 * @see RFC 6749 §10.4; https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags
 */
export function redisClusterStorage(cluster: RedisClusterLike, options: RedisStorageOptions = {}): RedisTokenStorage {
  return storageOn(clusterClient(cluster, "redisClusterStorage", "redisStorage"), options);
}

/** `GETDEL` for a server older than Redis 6.2: read and delete in one step. */
const GETDEL = script(`local v = redis.call('GET', KEYS[1]) redis.call('DEL', KEYS[1]) return v`);

/** The storage of {@link redisStorage} and {@link redisClusterStorage}, over a client that sends each command to its key's node. */
function storageOn(client: RedisClientLike, options: RedisStorageOptions): RedisTokenStorage {
  const { replicas } = options;
  const prefix = checkPrefix(options.prefix ?? "");
  if (
    replicas &&
    !(
      Number.isInteger(replicas.count) &&
      replicas.count >= 0 &&
      Number.isInteger(replicas.timeoutMs) &&
      replicas.timeoutMs > 0
    )
  ) {
    throw new RedisStorageError(
      "INVALID_OPTIONS",
      "replicas.count and replicas.timeoutMs must be integers, count >= 0 and timeoutMs > 0 (WAIT 0 would block forever)",
    );
  }
  const lock = lockOn(client, options);
  // Checked by lockOn above.
  const timeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;

  /** With `replicas`, waits for their acknowledgement of the write just made on this connection. */
  const replicated = async (key: string): Promise<void> => {
    if (!replicas) return;
    // WAIT itself blocks up to replicas.timeoutMs on the server before it answers.
    const acknowledged = Number(
      await send(client, ["WAIT", String(replicas.count), String(replicas.timeoutMs)], key, {
        timeoutMs: timeoutMs + replicas.timeoutMs,
      }),
    );
    if (!(acknowledged >= replicas.count)) {
      throw new RedisStorageError(
        "REPLICATION_TIMEOUT",
        `${acknowledged} of ${replicas.count} replicas acknowledged the write of ${key} within ${replicas.timeoutMs} ms`,
      );
    }
  };

  /** `GETDEL` where the server has it (Redis 6.2), else a script doing the same in one step. */
  let getdel = true;
  const take = async (key: string): Promise<unknown> => {
    if (getdel) {
      try {
        return await send(client, ["GETDEL", key], key, { timeoutMs });
      } catch (e) {
        const reason = (e as RedisStorageError).cause as Error | undefined;
        if (!/unknown command/i.test(String(reason?.message))) throw e;
        getdel = false;
      }
    }
    return GETDEL.run(client, key, [], { timeoutMs });
  };

  return {
    lock,
    refreshIntents,
    processIdentity: processIdentity(),
    // The manager names this key in its messages (DECISIONS D3): the one redis-cli shows.
    where: (name) => redisKey(prefix, name),
    async get(name) {
      const key = redisKey(prefix, name);
      const value = text(await send(client, ["GET", key], key, { timeoutMs }));
      if (value === undefined) throw new RedisStorageError("UNEXPECTED_REPLY", `GET of ${key} did not answer a string`);
      return value;
    },
    async set(name, value) {
      const key = redisKey(prefix, name);
      const reply = text(await send(client, ["SET", key, value], key, { timeoutMs }));
      if (reply !== "OK") throw new RedisStorageError("UNEXPECTED_REPLY", `SET of ${key} was not acknowledged with OK`);
      await replicated(key);
    },
    async delete(name) {
      const key = redisKey(prefix, name);
      await send(client, ["DEL", key], key, { timeoutMs });
      await replicated(key);
    },
    async setExpiring(name, value, lifetimeMs) {
      const key = redisKey(prefix, name);
      const px = String(Math.max(1, Math.ceil(lifetimeMs)));
      const reply = text(await send(client, ["SET", key, value, "PX", px], key, { timeoutMs }));
      if (reply !== "OK") throw new RedisStorageError("UNEXPECTED_REPLY", `SET of ${key} was not acknowledged with OK`);
      await replicated(key);
    },
    async take(name) {
      const key = redisKey(prefix, name);
      const value = text(await take(key));
      if (value === undefined)
        throw new RedisStorageError("UNEXPECTED_REPLY", `GETDEL of ${key} did not answer a string`);
      await replicated(key);
      return value;
    },
  };
}
