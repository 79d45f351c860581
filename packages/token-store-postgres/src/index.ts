/**
 * `@tenant-integration/token-store-postgres`: the token manager's storage and refresh lock on
 * PostgreSQL, over the node-postgres pool the app already has. One refresh across every process
 * sharing the database.
 *
 * @see RFC 9700 §4.14.2, RFC 6749 §6, §10.4
 */
export { PostgresStorageError, type PostgresStorageErrorCode } from "./errors.js";
export { postgresLock, type PostgresLockOptions } from "./lock.js";
export type { PostgresClientLike, PostgresPoolLike } from "./pool.js";
export { DEFAULT_TABLE, ensureSchema, SCHEMA_VERSION, schemaSql } from "./schema.js";
export { postgresStorage, type PostgresStorageOptions, type PostgresTokenStorage } from "./storage.js";
