/**
 * The error of the file storage and its lock.
 *
 * @see RFC 6749 §10.3 (tokens kept confidential)
 */

/**
 * The stable codes of {@link FileStorageError}.
 *
 * | code | when |
 * |---|---|
 * | `FILE_CORRUPT` | the token file was empty or not a JSON object of strings; it was moved aside (`movedTo`) and the storage is empty now (`reset` is `true`) |
 * | `FILE_UNSAFE` | the token file is not a regular file, or others may read it and its mode could not be tightened to 0600 |
 * | `IO_FAILED` | reading, writing or locking the file failed (read-only directory, full disk, permissions); `cause` is the system error |
 * | `LOCK_TIMEOUT` | a lock stayed held by another live process for the whole bounded wait |
 */
export type FileStorageErrorCode = "FILE_CORRUPT" | "FILE_UNSAFE" | "IO_FAILED" | "LOCK_TIMEOUT";

/**
 * A failure of `fileStorage` or of its lock. The message names the file and says what happened;
 * it never contains the file's content (which holds refresh tokens). The token manager reports the
 * failures of `get`, `set` and `delete` as `STORAGE_FAILED` with this error (copied, scrubbed) as
 * `cause`; a `FILE_CORRUPT` read as `NOT_SIGNED_IN` with this cause; a `LOCK_TIMEOUT` reaches the
 * caller of `getAccessToken` as is.
 *
 * @example
 * ```ts
 * try { await tm.getAccessToken(); } catch (e) {
 *   if (e instanceof FileStorageError && e.code === "LOCK_TIMEOUT") console.error(e.message); // names the lock file
 * }
 * ```
 * @see RFC 6749 §10.3
 */
export class FileStorageError extends Error {
  override name = "FileStorageError";
  /** The stable code; see {@link FileStorageErrorCode}. */
  readonly code: FileStorageErrorCode;
  /** The file (or lock) concerned. */
  readonly path: string;
  /** With `FILE_CORRUPT`: where the unreadable file was moved, kept for inspection. */
  readonly movedTo?: string;
  /** `true` with `FILE_CORRUPT`: the stored data was set aside, so every key is absent now. */
  readonly reset?: boolean;

  /**
   * @param code - the stable code
   * @param message - what happened, naming the file; never its content
   * @param path - the file or lock concerned
   * @param cause - the system error, if any
   * @param fields - `movedTo` and `reset` of a `FILE_CORRUPT`
   */
  constructor(
    code: FileStorageErrorCode,
    message: string,
    path: string,
    cause?: unknown,
    fields?: { movedTo: string; reset: true },
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.path = path;
    if (fields) Object.assign(this, fields);
  }
}
