/**
 * A cross-process lock on one machine: a lock directory beside a file, taken with `proper-lockfile`
 * (atomic `mkdir`, an mtime kept fresh by its live holder, stale detection), with a bounded wait.
 *
 * @see RFC 9700 §4.14.2 (refresh token rotation: one refresh at a time)
 */
import * as fs from "node:fs";
import { mkdir, rmdir, stat } from "node:fs/promises";
import lockfile from "proper-lockfile";
import { FileStorageError } from "./file-storage-error.js";

/** Options of {@link fileLock}. */
export interface FileLockOptions {
  /**
   * After how many milliseconds without an update from its holder a lock counts as abandoned and may
   * be taken over (default 10 000, at least 2 000). A live holder refreshes its lock every quarter of
   * this (at least every second), so only a killed or frozen holder is declared stale.
   */
  staleMs?: number;
  /** How long to wait for the lock before failing with `LOCK_TIMEOUT` (default 30 000). */
  timeoutMs?: number;
}

/** Errors of `mkdir` that mean "no lock can be made here", not "someone holds it". */
const CANNOT_CREATE = new Set(["EROFS", "EACCES", "EPERM", "ENOSPC", "EDQUOT"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const errno = (e: unknown): string | undefined => (e as { code?: string } | undefined)?.code;
/** Our own releases in flight: their `rmdir` must not go through the stale-takeover gate. */
const releasing = new Set<string>();
/** Per lock directory, the tail of this process's queue: one process waits in line, not in a spin. */
const tails = new Map<string, Promise<unknown>>();

/**
 * Removes a stale lock directory only while holding a second, short-lived "steal" directory, and only
 * if the lock is still stale then. proper-lockfile alone would let two waiters that both saw the old
 * lock as stale remove it one after the other, the second removing the first's fresh lock, so that
 * both would hold it (and both refresh with one refresh token): 3 runs out of 3 of the test "processes
 * finding a stale lock at the same moment" did, without this gate. What remains is a frozen holder
 * that wakes and releases between the stat and the rmdir below, a window of microseconds.
 *
 * @see https://github.com/moxystudio/node-proper-lockfile/issues/121 (the race, open upstream)
 */
async function removeStale(lockPath: string, staleMs: number): Promise<void> {
  const gate = lockPath + ".steal";
  try {
    await mkdir(gate);
  } catch (e) {
    if (errno(e) !== "EEXIST") throw e;
    // A stealer killed between its mkdir and rmdir would block every takeover: its gate is stale
    // after staleMs too (the gate is held for microseconds, so this second-order race is negligible).
    const gateStat = await stat(gate).catch(() => undefined);
    if (gateStat && gateStat.mtimeMs < Date.now() - staleMs) await rmdir(gate).catch(() => {});
    throw Object.assign(new Error("Lock is being taken over"), { code: "ELOCKED" });
  }
  try {
    const lockStat = await stat(lockPath).catch((e: unknown) => (errno(e) === "ENOENT" ? undefined : Promise.reject(e)));
    if (lockStat && lockStat.mtimeMs >= Date.now() - staleMs) throw Object.assign(new Error("Lock was taken meanwhile"), { code: "ELOCKED" });
    if (lockStat) await rmdir(lockPath).catch((e: unknown) => (errno(e) === "ENOENT" ? undefined : Promise.reject(e)));
  } finally {
    await rmdir(gate).catch(() => {});
  }
}

/** proper-lockfile's fs, whose `rmdir` of a lock it is not releasing goes through {@link removeStale}. */
function guardedFs(staleMs: number): typeof fs {
  return {
    ...fs,
    rmdir: ((path: string, callback: (e: NodeJS.ErrnoException | null) => void) => {
      if (releasing.has(path)) return fs.rmdir(path, callback);
      removeStale(path, staleMs).then(() => callback(null), callback);
    }) as typeof fs.rmdir,
  };
}

/**
 * Runs `task` while holding the lock directory `lockPath` (created beside the file it guards; the
 * parent directory must exist). Waits for a holder in another process by polling every 10–50 ms
 * (randomized, so waiters do not move in step), for at most `timeoutMs`. A holder that was killed
 * stops updating its lock's mtime, and after `staleMs` the next waiter takes the lock over.
 *
 * When the lock cannot be created at all (a read-only directory, a full disk), `task` runs under this
 * process's queue only, so that the process keeps working; the write that follows reports the fault.
 *
 * @throws {@link FileStorageError} `LOCK_TIMEOUT` when the lock stays held by a live process for
 * `timeoutMs`; `IO_FAILED` for any other failure to take it. Otherwise what `task` throws.
 * @example
 * ```ts
 * const result = await withFileLock("/home/me/.config/cli/tokens.json.write.lock", {}, async () => update());
 * ```
 * @see RFC 9700 §4.14.2
 */
export function withFileLock<T>(lockPath: string, options: FileLockOptions, task: () => Promise<T>): Promise<T> {
  const run = Promise.resolve(tails.get(lockPath))
    .catch(() => {})
    .then(() => holding(lockPath, options, task));
  const tail = run.catch(() => {});
  tails.set(lockPath, tail);
  // Forget the queue once it is empty, so the map stays as small as the locks in use.
  void tail.then(() => tails.get(lockPath) === tail && tails.delete(lockPath));
  return run;
}

async function holding<T>(lockPath: string, options: FileLockOptions, task: () => Promise<T>): Promise<T> {
  const staleMs = Math.max(options.staleMs ?? 10_000, 2_000);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  // proper-lockfile keys its bookkeeping by the guarded file's path and puts the lock at `<that>.lock`.
  const guarded = lockPath.replace(/\.lock$/, "");
  let release: (() => Promise<void>) | undefined;
  for (;;) {
    try {
      release = await lockfile.lock(guarded, {
        lockfilePath: lockPath,
        realpath: false,
        stale: staleMs,
        update: Math.max(staleMs / 4, 1_000),
        retries: 0,
        fs: guardedFs(staleMs),
        // The holder was frozen for longer than staleMs (a suspended laptop) and another process took
        // the lock over. The task cannot be undone; it finishes. The release below is a no-op once
        // proper-lockfile's update timer has noticed the takeover; if the task ends before that timer
        // runs, the release removes the new owner's lock (the lock directory has no owner to compare,
        // unlike the Redis lease). The manager's re-read under the lock and its invalid_grant retry
        // with the newest stored token are what remain in that case.
        onCompromised: () => {},
      });
      break;
    } catch (e) {
      if (CANNOT_CREATE.has(errno(e) ?? "")) return task();
      if (errno(e) !== "ELOCKED") throw new FileStorageError("IO_FAILED", `cannot take the lock ${lockPath}`, lockPath, e);
      if (Date.now() >= deadline) {
        throw new FileStorageError("LOCK_TIMEOUT", `the lock ${lockPath} stayed held by another process for ${timeoutMs} ms`, lockPath);
      }
      await sleep(10 + Math.random() * 40);
    }
  }
  try {
    return await task();
  } finally {
    releasing.add(lockPath);
    // A compromised lock is already gone (ERELEASED): nothing to undo.
    await release().catch(() => {});
    releasing.delete(lockPath);
  }
}
