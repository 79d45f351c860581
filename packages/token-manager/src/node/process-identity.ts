/**
 * This process's pid and host, and the liveness test of another process on the same host: what tells
 * a paused lock or intent holder (alive, to be waited for) from a dead one (taken over at once).
 *
 * @see RFC 9700 §4.14.2 (one refresh at a time under rotation)
 */
import { hostname } from "node:os";
import type { ProcessIdentity } from "../storage/storage.js";

/**
 * Whether process `pid` on `host` has exited: `true` only when `host` is this machine's and
 * `kill(pid, 0)` fails with `ESRCH`. A process that exists but belongs to another user (`EPERM`), or
 * one on another host, counts as not gone: it cannot be proven dead, so it is waited for (within the
 * bounded waits). A reused pid makes a dead holder look alive: the waits stay bounded all the same.
 *
 * @example
 * ```ts
 * if (isGone(owner.host, owner.pid)) takeOver();
 * ```
 * @see https://man7.org/linux/man-pages/man2/kill.2.html (signal 0: existence check)
 */
export function isGone(host: string, pid: number): boolean {
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as { code?: string }).code === "ESRCH";
  }
}

/**
 * The {@link ProcessIdentity} of this Node process, which `fileStorage` and `redisStorage` carry:
 * `os.hostname()`, `process.pid`, and {@link isGone}.
 *
 * @example
 * ```ts
 * const storage = { ...myStorage, processIdentity: processIdentity() };
 * ```
 * @see RFC 9700 §4.14.2
 */
export function processIdentity(): ProcessIdentity {
  return { host: hostname(), pid: process.pid, gone: isGone };
}
