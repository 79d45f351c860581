/**
 * `@tenant-integration/token-store-redis`: the token manager's storage and refresh lock on Redis or
 * Valkey, over a node-redis client the app connects. One refresh across a fleet.
 *
 * @see RFC 9700 §4.14.2, RFC 6749 §6, §10.4
 */
export type { RedisClientLike, RedisClusterLike } from "./client.js";
export { RedisStorageError, type RedisStorageErrorCode } from "./errors.js";
export { redisKey } from "./keys.js";
export { redisClusterLock, redisLock, type RedisLockOptions } from "./lock.js";
export { redisClusterStorage, redisStorage, type RedisStorageOptions, type RedisTokenStorage } from "./storage.js";
