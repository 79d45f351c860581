/**
 * The one error class of the PostgreSQL storage and lock. Messages name the table, the row (origin,
 * client id, session, kind) and the statement, never a value: values hold refresh tokens.
 */

/**
 * The stable codes of {@link PostgresStorageError}: branch on these, never on the message. The same
 * codes in every kit (spec/token-store/README.md, "PostgreSQL").
 *
 * @example
 * ```ts
 * const fixable: PostgresStorageErrorCode[] = ["SCHEMA_MISSING", "SCHEMA_MISMATCH", "READ_ONLY"];
 * ```
 * @see RFC 9700 §4.14.2 (why a lock guards the refresh)
 */
export type PostgresStorageErrorCode =
  /** An option is missing or invalid (a table name that is not `name` or `schema.name`, a duration that is not > 0…). */
  | "INVALID_OPTIONS"
  /**
   * The storage was given a name that is not one of its client's records: the storage is made for one
   * tenant origin and client id (those of the token manager using it), and the name is another's.
   */
  | "UNKNOWN_NAME"
  /** The table does not exist: apply `schema.sql` with your migrations, or call `ensureSchema()`. */
  | "SCHEMA_MISSING"
  /** The table exists but is not this kit's version of it (its comment, or a column, differs). */
  | "SCHEMA_MISMATCH"
  /**
   * The server refuses writes: a hot standby (a replica given as the primary) or a read-only
   * transaction default (`default_transaction_read_only`). The tokens must live on the primary.
   */
  | "READ_ONLY"
  /**
   * A statement failed: the connection was refused or lost, no answer came within
   * `commandTimeoutMs`, the server cancelled it (`statement_timeout`), or it answered an error; the
   * message says which, `cause` has the driver's error (its SQLSTATE in `cause.code`).
   */
  | "COMMAND_FAILED"
  /**
   * Taking the lock (or checking it is still held) failed on a PostgreSQL error or got no answer;
   * `cause` has it. The lock rejects with the token manager's `STORAGE_FAILED` carrying this as its cause.
   */
  | "LOCK_UNAVAILABLE"
  /** The bounded wait for the lock ran out while another session of the database held it. */
  | "LOCK_TIMEOUT";

/**
 * An error of the PostgreSQL storage or lock, with a stable `code` and the underlying error as
 * `cause`. Never carries a stored value or a token.
 *
 * @example
 * ```ts
 * try {
 *   await tm.getAccessToken();
 * } catch (e) {
 *   if (e instanceof PostgresStorageError && e.code === "LOCK_TIMEOUT") retryLater();
 * }
 * ```
 * @see RFC 6749 §10.4 (refresh tokens kept confidential), RFC 9700 §4.14.2
 */
export class PostgresStorageError extends Error {
  override readonly name = "PostgresStorageError";

  constructor(
    /** Stable, for branching. */
    readonly code: PostgresStorageErrorCode,
    message: string,
    cause?: unknown,
  ) {
    super(`${code}: ${message}`, cause === undefined ? undefined : { cause });
  }
}
