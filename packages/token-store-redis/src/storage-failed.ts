/**
 * One code for "Redis failed" at every step (issue 27): the token manager reports a failed read or
 * write of the storage as `STORAGE_FAILED`, and passes a lock's error on as it is; so the lock
 * reports its own Redis failures the same way, and a caller branches once, whichever step met the
 * outage. The Python kit's lock does the same.
 */
import { TokenManagerError } from "@tenant-integration/token-manager";
import type { RedisStorageError } from "./errors.js";

/**
 * A lock command's Redis failure (refused, closed, no answer within `commandTimeoutMs`, an error
 * reply), as the token manager's `STORAGE_FAILED`, the store's `LOCK_UNAVAILABLE` error as `cause`.
 * The message keeps the store's reason (which command on which key, and why), never a value.
 */
export function storageFailed(error: RedisStorageError): TokenManagerError {
  const reason = error.message.slice(`${error.code}: `.length);
  return new TokenManagerError("STORAGE_FAILED", `STORAGE_FAILED: ${reason}`, error);
}
