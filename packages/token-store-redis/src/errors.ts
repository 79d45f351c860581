/**
 * The one error class of the Redis storage and lock. Messages name the Redis key and the command,
 * never a value: values hold refresh tokens.
 */

/**
 * The stable codes of {@link RedisStorageError}: branch on these, never on the message.
 *
 * @example
 * ```ts
 * const retryable: RedisStorageErrorCode[] = ["COMMAND_FAILED", "LOCK_UNAVAILABLE", "LOCK_TIMEOUT"];
 * ```
 * @see RFC 9700 §4.14.2 (why a lock guards the refresh)
 */
export type RedisStorageErrorCode =
  /** An option is not a finite positive number, or the renewal interval is not shorter than the lease. */
  | "INVALID_OPTIONS"
  /** A Redis command failed (connection lost, client closed, an error reply); `cause` has the client's error. */
  | "COMMAND_FAILED"
  /**
   * Redis answered in a form the storage does not read (a `GET` neither a string nor nothing, a `SET`
   * not `OK`). A key holding another Redis type is `COMMAND_FAILED` (`WRONGTYPE`).
   */
  | "UNEXPECTED_REPLY"
  /** Fewer replicas than asked acknowledged a write within the `replicas` timeout (`WAIT`). */
  | "REPLICATION_TIMEOUT"
  /**
   * Taking the lock (or checking it is still held) failed on a Redis error or got no answer; `cause`
   * has it. The lock rejects with the token manager's `STORAGE_FAILED` carrying this as its cause.
   */
  | "LOCK_UNAVAILABLE"
  /** The bounded wait for the lock ran out while another owner held it. */
  | "LOCK_TIMEOUT"
  /**
   * The lease ran out under a running task: a renewal found another owner (or no lock), no renewal
   * succeeded for a whole lease, or the release found the lock no longer this owner's. Reported to
   * `onLeaseLost`; the task itself goes on.
   */
  | "LEASE_LOST";

/**
 * An error of the Redis storage or lock, with a stable `code` and the underlying error as `cause`.
 * Never carries a stored value or a token.
 *
 * @example
 * ```ts
 * try {
 *   await tm.getAccessToken();
 * } catch (e) {
 *   if (e instanceof RedisStorageError && e.code === "LOCK_TIMEOUT") retryLater();
 * }
 * ```
 * @see RFC 6749 §10.4 (refresh tokens kept confidential), RFC 9700 §4.14.2
 */
export class RedisStorageError extends Error {
  override readonly name = "RedisStorageError";

  constructor(
    /** Stable, for branching. */
    readonly code: RedisStorageErrorCode,
    message: string,
    cause?: unknown,
  ) {
    super(`${code}: ${message}`, cause === undefined ? undefined : { cause });
  }
}
