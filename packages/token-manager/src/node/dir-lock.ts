/**
 * A cross-process lock on one machine: a lock directory beside a file, taken with `proper-lockfile`
 * (atomic `mkdir`, an mtime kept fresh by its live holder, stale detection), naming its holder's pid
 * and host in an owner file, with a bounded wait.
 *
 * @see RFC 9700 §4.14.2 (refresh token rotation: one refresh at a time)
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { mkdir, readFile, rmdir, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import type { HeldLock, LockWaitOptions } from "../lock.js";
import { FileStorageError } from "./file-storage-error.js";
import { isGone } from "./process-identity.js";

/** Options of {@link withDirLock}. */
export interface DirLockOptions extends LockWaitOptions {
  /**
   * After how many milliseconds without an update from its holder a lock counts as abandoned and may
   * be taken over (default 10 000, at least 2 000), when its holder cannot be checked (no owner file,
   * or another host). A live holder refreshes its lock every quarter of this (at least every second).
   * A holder on this host is taken over when it has exited, at once, and never while it lives.
   */
  staleMs?: number;
  /** How long to wait for the lock before failing with `LOCK_TIMEOUT` (default 30 000). */
  timeoutMs?: number;
}

/** Errors of `mkdir` that mean "no lock can be made here", not "someone holds it". */
const CANNOT_CREATE = new Set(["EROFS", "EACCES", "EPERM", "ENOSPC", "EDQUOT"]);
/** How long a waiter sleeps when no change beside the lock woke it, until watching is seen to work here. */
const POLL_MS = 25;
/**
 * How long it sleeps once watching has delivered an event: the poll is then only the safety net for
 * what no event announces (a holder that died, or went stale, without releasing).
 */
const WATCHED_POLL_MS = 100;
const errno = (e: unknown): string | undefined => (e as { code?: string } | undefined)?.code;
/** Our own releases in flight: their `rmdir` must not go through the stale-takeover gate. */
const releasing = new Set<string>();
/**
 * proper-lockfile, loaded at the first lock: with its dependencies (graceful-fs, retry, signal-exit)
 * it was most of what importing `/node` cost, and a program that only reads its tokens never locks
 * (issue 41 point 5).
 */
let properLockfile: Promise<typeof import("proper-lockfile")> | undefined;
const lockfile = () => (properLockfile ??= import("proper-lockfile").then((loaded) => loaded.default));

/** Per lock directory, the tail of this process's queue: one process waits in line, not in a spin. */
const tails = new Map<string, Promise<unknown>>();
/**
 * Lock directories this process held and could not remove when it let them go (the disk did not
 * answer: a network disk, an unplugged drive), by path: the owner id it wrote. A live owner is never
 * taken over, so nobody else may remove them: this process does, as soon as the disk answers again
 * (a retry each second, and at once before it takes the same lock again).
 */
const leftBehind = new Map<string, string>();
/** How often a lock directory left behind is tried again. */
const LEFT_BEHIND_RETRY_MS = 1_000;
let leftBehindTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * The name of the owner file inside a lock directory: one line of JSON,
 * `{"pid":<int>,"host":"<os.hostname()>","id":"<random hex>","since":<ms since epoch>}`, written by
 * the holder right after its `mkdir`. proper-lockfile (and any reader of the directory alone) still
 * sees the directory as the lock; the file only adds who holds it.
 */
export const OWNER_FILE = "owner";

/** The holder a lock directory names, when its owner file is there and readable. */
export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly id: string;
  readonly since: number;
}

/** Reads the owner file of `lockPath`; `undefined` when absent or unreadable (a writer that keeps none, a holder killed before writing it). */
export async function readOwner(lockPath: string): Promise<LockOwner | undefined> {
  try {
    const owner = JSON.parse(await readFile(join(lockPath, OWNER_FILE), "utf8")) as Partial<LockOwner>;
    if (
      typeof owner.pid === "number" &&
      typeof owner.host === "string" &&
      typeof owner.id === "string" &&
      typeof owner.since === "number"
    )
      return owner as LockOwner;
  } catch {}
  return undefined;
}

/** Removes a lock directory and its owner file (either may be gone already). */
async function removeLock(lockPath: string): Promise<void> {
  await unlink(join(lockPath, OWNER_FILE)).catch(() => {});
  await rmdir(lockPath).catch((e: unknown) => (errno(e) === "ENOENT" ? undefined : Promise.reject(e)));
}

/** The owner file of `lockPath` as it is, `undefined` when absent; throws when it cannot be read (a disk that does not answer). */
async function ownerNow(lockPath: string): Promise<Partial<LockOwner> | undefined> {
  try {
    return JSON.parse(await readFile(join(lockPath, OWNER_FILE), "utf8")) as Partial<LockOwner>;
  } catch (e) {
    if (errno(e) === "ENOENT") return undefined;
    if (e instanceof SyntaxError) return {};
    throw e;
  }
}

/**
 * Removes the lock directory this process left behind at `lockPath` when it still names this
 * process's owner id; forgets it once it is gone or another's. Returns whether it is settled; a disk
 * that still does not answer leaves it for the next try.
 */
async function removeLeftBehind(lockPath: string): Promise<boolean> {
  const id = leftBehind.get(lockPath);
  if (id === undefined) return true;
  try {
    if ((await ownerNow(lockPath))?.id === id) await removeLock(lockPath);
    leftBehind.delete(lockPath);
    return true;
  } catch {
    return false;
  }
}

/** Tries every lock directory left behind again in a second, until each is settled (a timer that does not keep the process alive). */
function retryLeftBehind(): void {
  if (leftBehindTimer || leftBehind.size === 0) return;
  leftBehindTimer = setTimeout(async () => {
    leftBehindTimer = undefined;
    for (const lockPath of [...leftBehind.keys()]) await removeLeftBehind(lockPath);
    retryLeftBehind();
  }, LEFT_BEHIND_RETRY_MS);
  leftBehindTimer.unref?.();
}

/**
 * Lets a held lock go: proper-lockfile's release, or, when it thought the lock lost, removes the
 * directory if it still names `me` (or it would outlive us: a live owner is never taken over). When
 * the disk does not answer, the directory is remembered and removed once it does.
 */
async function letGo(
  lockPath: string,
  me: LockOwner,
  owned: boolean,
  compromised: boolean,
  release: () => Promise<void>,
) {
  try {
    if (!compromised) {
      releasing.add(lockPath);
      try {
        await release();
      } finally {
        releasing.delete(lockPath);
      }
    } else if (owned && (await ownerNow(lockPath))?.id === me.id) await removeLock(lockPath);
  } catch (e) {
    if (errno(e) === "ENOENT" || !owned) return;
    leftBehind.set(lockPath, me.id);
    retryLeftBehind();
  }
}

/**
 * Removes a stale lock directory only while holding a second, short-lived "steal" directory, and only
 * if the lock is still stale then. proper-lockfile alone would let two waiters that both saw the old
 * lock as stale remove it one after the other, the second removing the first's fresh lock, so that
 * both would hold it (and both refresh with one refresh token): 3 runs out of 3 of the test "processes
 * finding a stale lock at the same moment" did, without this gate.
 *
 * Stale is decided by the owner file first: a holder on this host that is still alive (paused with
 * SIGSTOP, a suspended laptop) is never taken over, however old the mtime; one that has exited
 * (`kill(pid, 0)` fails with ESRCH) is taken over at once, however fresh the mtime. Only without an
 * owner file, or with a holder on another host (a shared network disk), does the mtime decide.
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
    const lockStat = await stat(lockPath).catch((e: unknown) =>
      errno(e) === "ENOENT" ? undefined : Promise.reject(e),
    );
    if (!lockStat) return;
    const owner = await readOwner(lockPath);
    const dead = owner !== undefined && isGone(owner.host, owner.pid);
    if (!dead) {
      if (owner && owner.host === hostname())
        throw Object.assign(new Error("Lock holder is alive"), { code: "ELOCKED" });
      if (lockStat.mtimeMs >= Date.now() - staleMs)
        throw Object.assign(new Error("Lock was taken meanwhile"), { code: "ELOCKED" });
    }
    await removeLock(lockPath);
  } finally {
    await rmdir(gate).catch(() => {});
  }
}

/**
 * proper-lockfile's fs: its `rmdir` of a lock it is not releasing goes through {@link removeStale};
 * its releases (and its removal at process exit) remove the owner file first.
 */
function guardedFs(staleMs: number): typeof fs {
  let made = guardedFsByStale.get(staleMs);
  if (!made) guardedFsByStale.set(staleMs, (made = makeGuardedFs(staleMs)));
  return made;
}

/** {@link guardedFs}, one per `staleMs` (a copy of `fs` per lock attempt was a waiter's most frequent cost). */
const guardedFsByStale = new Map<number, typeof fs>();

function makeGuardedFs(staleMs: number): typeof fs {
  return {
    ...fs,
    rmdir: ((path: string, callback: (e: NodeJS.ErrnoException | null) => void) => {
      if (releasing.has(path)) return fs.unlink(join(path, OWNER_FILE), () => fs.rmdir(path, callback));
      removeStale(path, staleMs).then(() => callback(null), callback);
    }) as typeof fs.rmdir,
    rmdirSync: ((path: string) => {
      try {
        fs.unlinkSync(join(path, OWNER_FILE));
      } catch {}
      fs.rmdirSync(path);
    }) as typeof fs.rmdirSync,
  };
}

/** Says who holds `lockPath` for a LOCK_TIMEOUT message: a pid and whether it runs on this host. */
async function describeHolder(lockPath: string): Promise<string> {
  const owner = await readOwner(lockPath);
  if (!owner) return "another process";
  if (owner.host !== hostname()) return `process ${owner.pid} on host ${owner.host}`;
  const lockStat = await stat(lockPath).catch(() => undefined);
  const quiet = lockStat ? Math.max(0, Math.round(Date.now() - lockStat.mtimeMs)) : 0;
  return `process ${owner.pid} on this host, which is alive but has not updated the lock for ${quiet} ms (stopped or paused? it is not taken over while it lives)`;
}

/** The wait for a lock ended because its `until` check said so: the task did not run. */
export class LockWaitEnded extends Error {
  override readonly name = "LockWaitEnded";
  readonly code = "LOCK_WAIT_ENDED";
  constructor(lockPath: string) {
    super(`the wait for the lock ${lockPath} ended: no longer needed`);
  }
}

/**
 * Runs `task` while holding the lock directory `lockPath` (created beside the file it guards; the
 * parent directory must exist). Waits for a holder in another process, for at most `timeoutMs`, waking
 * on any change in the lock's directory (`fs.watch`: the lock released, the guarded file replaced) or
 * every 20–30 ms where watching does not fire; on each wake, `options.until` (when given) may end the
 * wait without the lock. The holder writes its pid
 * and host into the lock (the owner file, {@link OWNER_FILE}): a holder on this host that has exited
 * is taken over at once; one that is alive is waited for, even when paused (SIGSTOP) past `staleMs`;
 * without an owner file, or with a holder on another host, a holder that stopped updating the lock's
 * mtime for `staleMs` is taken over.
 *
 * `task` gets a {@link HeldLock} whose `isHeld()` is false once the lock was compromised (taken over,
 * removed) or names another owner.
 *
 * When the lock cannot be created at all (a read-only directory, a full disk), `task` runs under this
 * process's queue only, so that the process keeps working; the write that follows reports the fault.
 *
 * @throws {@link FileStorageError} `LOCK_TIMEOUT` when the lock stays held by a live process for
 * `timeoutMs` (the message names it, and says when it is alive but not updating the lock: paused);
 * `IO_FAILED` for any other failure to take it. Otherwise what `task` throws.
 * @example
 * ```ts
 * const result = await withDirLock("/home/me/.config/cli/tokens.json.write.lock", {}, async () => update());
 * ```
 * @see RFC 9700 §4.14.2
 */
export function withDirLock<T>(
  lockPath: string,
  options: DirLockOptions,
  task: (held: HeldLock) => Promise<T>,
): Promise<T> {
  const run = Promise.resolve(tails.get(lockPath))
    .catch(() => {})
    .then(() => holding(lockPath, options, task));
  const tail = run.catch(() => {});
  tails.set(lockPath, tail);
  // Forget the queue once it is empty, so the map stays as small as the locks in use.
  void tail.then(() => tails.get(lockPath) === tail && tails.delete(lockPath));
  return run;
}

/** What woke a waiter: the lock directory came or went, the guarded file was replaced, or the poll. */
type Wake = "lock" | "file" | "poll";

/**
 * Wakes a waiter when, in the directory of `lockPath`, the lock directory itself is created or removed
 * (`"lock"`), or the file it guards (`<file>` for `<file>.refresh.lock`) is replaced (`"file"`). Other
 * entries (temporary files, the other lock) and changes of the lock's mtime (its holder's owner file
 * and updates) do not wake it, so that the holder's writes do not wake every waiter several times over
 * while it needs the CPU. Without a change it wakes after about {@link POLL_MS} (`"poll"`): `fs.watch`
 * does not fire everywhere (network disks), and may not be available at all (inotify limits), in which
 * case only the poll remains. Once any event has arrived, watching works here and the poll slows to
 * {@link WATCHED_POLL_MS}.
 */
function changes(lockPath: string): { next(): Promise<Wake>; close(): void } {
  let changed: Wake | undefined;
  let watched = false;
  let wake: ((why: Wake) => void) | undefined;
  let watcher: fs.FSWatcher | undefined;
  const lockName = basename(lockPath);
  // proper-lockfile's lock of `<file>` is `<file>.lock`; ours are `<file>.refresh.lock` and `<file>.write.lock`.
  const guardedName = lockName.replace(/(\.(refresh|write))?\.lock$/, "");
  try {
    watcher = fs.watch(dirname(lockPath), { persistent: false }, (event, name) => {
      watched = true;
      // Some platforms give no name: then any change wakes, as a change of the lock.
      const why: Wake | undefined =
        !name || (name === lockName && event === "rename") ? "lock" : name === guardedName ? "file" : undefined;
      if (!why) return;
      // A change of the lock outranks one of the file: it is the one that calls for trying the lock again.
      if (changed !== "lock") changed = why;
      wake?.(changed);
    });
    watcher.on("error", () => watcher?.close());
  } catch {}
  return {
    next: () =>
      new Promise<Wake>((resolve) => {
        if (changed) {
          const why = changed;
          changed = undefined;
          return resolve(why);
        }
        // Randomized, so that waiters woken by the poll do not move in step.
        const timer = setTimeout(
          () => done("poll"),
          (watched ? WATCHED_POLL_MS : POLL_MS) * (0.8 + Math.random() * 0.4),
        );
        function done(why: Wake) {
          clearTimeout(timer);
          changed = undefined;
          wake = undefined;
          resolve(why);
        }
        wake = done;
      }),
    close: () => watcher?.close(),
  };
}

/** What a poll looks at: the lock directory (another inode is another holder's) and the file it guards. */
interface Glance {
  /** The lock directory's inode and mtime; `undefined` when there is none. */
  readonly lock: { readonly ino: number; readonly mtimeMs: number } | undefined;
  /** The guarded file's inode, mtime and size, as text: a write replaces it (a rename), so they change. */
  readonly file: string;
}

/** Two `stat`s, where a lock attempt and a read of the file are a dozen file operations. */
async function glance(lockPath: string): Promise<Glance> {
  const file = lockPath.replace(/(\.(refresh|write))?\.lock$/, "");
  const [lock, guarded] = await Promise.all([stat(lockPath).catch(() => undefined), stat(file).catch(() => undefined)]);
  return {
    lock: lock && { ino: lock.ino, mtimeMs: lock.mtimeMs },
    file: guarded ? `${guarded.ino}:${guarded.mtimeMs}:${guarded.size}` : "none",
  };
}

/**
 * Whether the lock seen at the last look is still held the same way: the same directory, by a holder
 * still alive (on this host: `kill(pid, 0)`) or, when that cannot be known, still updating it.
 */
function holdsOn(before: Glance, now: Glance, owner: LockOwner | undefined, staleMs: number): boolean {
  if (!before.lock || !now.lock || before.lock.ino !== now.lock.ino) return false;
  if (owner && owner.host === hostname()) return !isGone(owner.host, owner.pid);
  return now.lock.mtimeMs >= Date.now() - staleMs;
}

async function holding<T>(lockPath: string, options: DirLockOptions, task: (held: HeldLock) => Promise<T>): Promise<T> {
  const staleMs = Math.max(options.staleMs ?? 10_000, 2_000);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  // proper-lockfile keys its bookkeeping by the guarded file's path and puts the lock at `<that>.lock`.
  const guarded = lockPath.replace(/\.lock$/, "");
  let release: (() => Promise<void>) | undefined;
  let compromised = false;
  let watch: ReturnType<typeof changes> | undefined;
  // A directory this process left behind here is removed first (it would wait for itself).
  await removeLeftBehind(lockPath);
  try {
    for (;;) {
      try {
        release = await (await lockfile()).lock(guarded, {
          lockfilePath: lockPath,
          realpath: false,
          stale: staleMs,
          update: Math.max(staleMs / 4, 1_000),
          retries: 0,
          fs: guardedFs(staleMs),
          // The lock directory was removed or its mtime changed by someone else while this holder was
          // frozen. The task cannot be undone: it goes on, but its HeldLock says the lock is lost, so
          // the token manager sends no refresh under it.
          onCompromised: () => {
            compromised = true;
          },
        });
        break;
      } catch (e) {
        if (CANNOT_CREATE.has(errno(e) ?? "")) return task({ isHeld: async () => true });
        if (errno(e) !== "ELOCKED")
          throw new FileStorageError("IO_FAILED", `cannot take the lock ${lockPath}`, lockPath, e);
        // A holder on this host that has exited is taken over now, not after staleMs.
        const owner = await readOwner(lockPath);
        if (owner && isGone(owner.host, owner.pid)) {
          await removeStale(lockPath, staleMs).catch(() => {});
          continue;
        }
        if (Date.now() >= deadline) {
          throw new FileStorageError(
            "LOCK_TIMEOUT",
            `the lock ${lockPath} stayed held for ${timeoutMs} ms by ${await describeHolder(lockPath)}`,
            lockPath,
          );
        }
        watch ??= changes(lockPath);
        const tried = Date.now();
        let seen: Glance | undefined;
        for (;;) {
          const why = await watch.next();
          if (why === "poll") {
            // A poll stands in for what no event announces: a lock that changed hands or went stale, a
            // holder that died, a file replaced where watching does not fire. When a look at the lock
            // and the file shows none of that since the last poll, there is nothing to read and no
            // lock to try.
            const now = await glance(lockPath);
            const quiet = seen && now.file === seen.file && holdsOn(seen, now, owner, staleMs);
            seen = now;
            if (quiet && Date.now() < deadline) continue;
          }
          // Checked before trying again: a holder writes the guarded file before it releases the lock,
          // so a waiter that would take it after a release has seen the write here first.
          if (options.until && (await options.until())) throw new LockWaitEnded(lockPath);
          // The file changed but the lock did not (the holder wrote something else than fresh tokens,
          // such as its refresh intent): the lock is still held, and is tried again only after a change
          // of it, a poll, or, while the file keeps changing, a poll's time.
          if (why !== "file" || !options.until || Date.now() - tried >= WATCHED_POLL_MS) break;
        }
      }
    }
  } finally {
    watch?.close();
  }
  const me: LockOwner = { pid: process.pid, host: hostname(), id: randomBytes(16).toString("hex"), since: Date.now() };
  // Without an owner file (a full disk), the lock works as before: by its mtime alone.
  // Adding a file changes the directory's mtime, which proper-lockfile compares with the one it set at
  // its next update and would take for a takeover (compromised): the mtime is put back as it was.
  const taken = await stat(lockPath).catch(() => undefined);
  // A write that fails after creating the file (ENOSPC) leaves it empty: removed, so that the lock is
  // plainly owner-less, as the protocol says, and nothing but the directory is left to release.
  const owned = await writeFile(join(lockPath, OWNER_FILE), JSON.stringify(me), { mode: 0o600 }).then(
    () => true,
    () =>
      unlink(join(lockPath, OWNER_FILE)).then(
        () => false,
        () => false,
      ),
  );
  if (owned && taken) await utimes(lockPath, taken.atime, taken.mtime).catch(() => {});
  const isHeld = async (): Promise<boolean> => {
    if (compromised) return false;
    if (!owned) return true;
    return (await readOwner(lockPath))?.id === me.id;
  };
  try {
    return await task({ isHeld });
  } finally {
    await letGo(lockPath, me, owned, compromised, release as () => Promise<void>);
  }
}
