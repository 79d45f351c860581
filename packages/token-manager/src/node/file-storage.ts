/**
 * A token storage in one JSON file, shared safely by the processes of one machine: command-line
 * tools on Node (and Bun, Deno with Node APIs).
 *
 * @see RFC 6749 §10.3 (tokens kept confidential), RFC 8252 (native apps), RFC 9700 §4.14.2 (rotation)
 */
import { createHash, randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, open, readdir, readFile, readlink, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { HeldLock, Lock, LockWaitOptions } from "../lock.js";
import { parsePending } from "../pending.js";
import { type RefreshIntents, refreshIntents } from "../refresh-intent.js";
import type { TokenStorage } from "../storage/storage.js";
import { withDirLock, type DirLockOptions } from "./dir-lock.js";
import { FileStorageError } from "./file-storage-error.js";
import { processIdentity } from "./process-identity.js";

/** Options of {@link fileStorage}. */
export interface FileStorageOptions {
  /**
   * After how many milliseconds a lock whose holder stopped updating it (a killed process) is taken
   * over (default 10 000, at least 2 000). This is how long a killed holder can block the others.
   */
  staleMs?: number;
  /** How long to wait for a lock held by a live process before failing with `LOCK_TIMEOUT` (default 30 000). */
  lockTimeoutMs?: number;
}

/** A {@link TokenStorage} with the cross-process lock that `createTokenManager` picks up, and the refresh intents beside it. */
export interface FileTokenStorage extends TokenStorage {
  readonly lock: Lock;
  readonly refreshIntents: RefreshIntents;
}

const errno = (e: unknown): string | undefined => (e as { code?: string } | undefined)?.code;
/** Symlinks followed before giving up, as the kernel's own limit (ELOOP). */
const MAX_LINKS = 40;

/**
 * Follows `path` through symlinks to the file they name, which need not exist yet (a dangling link
 * is written through, creating its target), so that every process locks and writes the same file
 * and a link is never replaced by a regular file.
 */
async function target(path: string): Promise<string> {
  let current = resolve(path);
  for (let hops = 0; hops < MAX_LINKS; hops++) {
    let info;
    try {
      info = await lstat(current);
    } catch (e) {
      if (errno(e) === "ENOENT") return current;
      throw new FileStorageError(
        "IO_FAILED",
        `cannot read the token file ${current} (${errno(e) ?? "error"})`,
        current,
        e,
      );
    }
    if (!info.isSymbolicLink()) {
      if (!info.isFile())
        throw new FileStorageError("FILE_UNSAFE", `the token file ${current} is not a regular file`, current);
      return current;
    }
    current = resolve(dirname(current), await readlink(current));
  }
  throw new FileStorageError("FILE_UNSAFE", `the token file ${path} is a loop of symlinks`, path);
}

/** What is wrong with the text of a token file, or `undefined` when it is a JSON object of strings. */
function problem(text: string): string | undefined {
  if (!text.trim()) return "empty";
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // The parser's message quotes the text, which may hold tokens: say only what is wrong.
    return "not valid JSON";
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return "not a JSON object";
  if (!Object.values(data).every((v) => typeof v === "string")) return "not a JSON object of strings";
  return undefined;
}

/**
 * Stores every key in one JSON file at `path`, for the processes of one machine. Safe by default:
 *
 * - **One refresh among processes.** `lock` holds the lock directory `<file>.refresh.lock` (with
 *   `proper-lockfile`: an atomic `mkdir`, kept fresh by its live holder). `createTokenManager` uses it
 *   unless given its own `lock`, re-reads the file under it, and refreshes only if it still must. It
 *   reads the file first without the lock, and uses tokens another process has refreshed without
 *   taking it; a process waiting for the lock wakes when the file is replaced or the lock is released
 *   (`fs.watch`, with a poll: every 25 ms until watching is seen to fire, then every 100 ms as a safety
 *   net), and stops waiting once the file holds fresh tokens. A
 *   killed holder blocks the others for at most `staleMs`; the wait is bounded by `lockTimeoutMs`.
 * - **Writes that lose nothing.** Each `set` and `delete` reads, changes and writes the file under a
 *   second, short lock `<file>.write.lock` (separate, because a refresh writes while holding the
 *   refresh lock), so keys written by concurrent processes are all kept. A write goes to
 *   `<file>.<random>.tmp`, is fsynced, renamed over the file, and the directory is fsynced: a crash
 *   leaves the old or the new file, durably. Temporary files left by killed writers are removed by the
 *   next writer.
 * - **Symlinks** are followed: the file they name is written (and locked), the link stays.
 * - **Modes.** The directory is created 0700 and the file 0600. An existing file that others may read
 *   is tightened to 0600 on first access; if that fails (not its owner), it is refused (`FILE_UNSAFE`).
 * - **Faults.** An empty or corrupt file is moved aside to `<file>.corrupt-<time>` (kept for
 *   inspection) and reported once as `FILE_CORRUPT` with `reset: true`, which the manager turns into
 *   `NOT_SIGNED_IN`; a write (sign-in) then creates a good file. A read-only directory or a full disk
 *   fails each write at once with `IO_FAILED` (`cannot write the token file <path> (EROFS)`); the
 *   manager keeps unwritten tokens in memory (see `getAccessToken`). Every error names the file.
 *
 * @throws {@link FileStorageError} from the returned methods: `FILE_CORRUPT`, `FILE_UNSAFE`,
 * `IO_FAILED`, `LOCK_TIMEOUT` (the manager reports them as described on {@link FileStorageError}).
 * @example
 * ```ts
 * import { fileStorage } from "@tenant-integration/token-manager/node";
 * import { homedir } from "node:os";
 * const storage = fileStorage(`${homedir()}/.config/my-cli/tokens.json`);
 * ```
 * @see RFC 6749 §10.3, RFC 9700 §4.14.2
 */
export function fileStorage(path: string, options: FileStorageOptions = {}): FileTokenStorage {
  const state: FileState = {
    path,
    safe: new Set(),
    directoryMade: false,
    gathering: undefined,
    tail: Promise.resolve(),
    lockOptions: {
      ...(options.staleMs === undefined ? {} : { staleMs: options.staleMs }),
      ...(options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs }),
    },
  };
  return {
    get: getKey.bind(null, state),
    set: setKey.bind(null, state),
    delete: deleteKey.bind(null, state),
    // Pending sign-ins: every write drops the expired ones, so a set is enough to expire them.
    setExpiring: (key, value) => setKey(state, key, value),
    take: takeKey.bind(null, state),
    lock: (name, task, wait) =>
      wait?.sessionId === undefined
        ? locked(state, "refresh", (_file, held) => task(held), wait)
        : locked(state, sessionLockKind(name), (_file, held) => task(held)),
    refreshIntents,
    processIdentity: processIdentity(),
  };
}

/** A file storage: the path it was given (resolved through symlinks at each use) and its locks' options. */
interface FileState {
  readonly path: string;
  readonly lockOptions: DirLockOptions;
  /** The token files whose mode was checked (and tightened) by this storage: it is checked at the first access only. */
  readonly safe: Set<string>;
  /** Whether the token file's directory was made (or found) by this storage: locks then take it as there. */
  directoryMade: boolean;
  /** The changes waiting for the next rewrite of the file, gathered while one runs; `undefined` when none waits. */
  gathering: Change[] | undefined;
  /** The last rewrite started or queued: the next one runs after it. */
  tail: Promise<void>;
}

/** A change of the file's data waiting for its rewrite, and the caller waiting for it to be durable. */
interface Change {
  /** Changes `data`; says whether anything changed. */
  readonly apply: (data: Record<string, string>) => boolean;
  /** The key it sets, if any: a pending sign-in just written is not dropped as expired. */
  readonly written: string | undefined;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** The value of `key`, read without a lock; an unreadable file is judged again under the write lock. */
async function getKey(state: FileState, key: string): Promise<string | undefined> {
  const file = await target(state.path);
  const text = await readText(state, file);
  if (text === undefined) return undefined;
  if (problem(text) === undefined) return (JSON.parse(text) as Record<string, string>)[key];
  // Decide under the write lock, on a fresh read: another process may have replaced it meanwhile.
  return locked(state, "write", async (file) => {
    const again = await readText(state, file);
    if (again === undefined) return undefined;
    const what = problem(again);
    if (what === undefined) return (JSON.parse(again) as Record<string, string>)[key];
    throw await setAside(file, what);
  });
}

/** Writes `key`, keeping every other key of the file. */
function setKey(state: FileState, key: string, value: string): Promise<void> {
  return update(
    state,
    (data) => {
      data[key] = value;
      return true;
    },
    key,
  );
}

/** Removes `key`, keeping every other key of the file; the file is not written when the key was absent. */
function deleteKey(state: FileState, key: string): Promise<void> {
  return update(state, (data) => {
    if (!(key in data)) return false;
    delete data[key];
    return true;
  });
}

/** Reads and removes `key` in one step, under the write lock (a pending sign-in, taken once). */
async function takeKey(state: FileState, key: string): Promise<string | undefined> {
  let taken: string | undefined;
  await update(state, (data) => {
    taken = data[key];
    if (taken === undefined) return false;
    delete data[key];
    return true;
  });
  return taken;
}

/**
 * The refresh lock directory's kind of a session's lock `name`: `<h>.refresh`, `<h>` the first 16
 * lowercase hex digits of SHA-256 of the name, so that one session's refresh never waits for
 * another's (spec/token-store/README.md, "Locks"). Polled without an `until` check: each of many
 * sessions' waiters would otherwise read the whole file at every wake.
 */
const sessionLockKind = (name: string): string =>
  createHash("sha256").update(name, "utf8").digest("hex").slice(0, 16) + ".refresh";

/** The end of a pending sign-in's name (spec/token-store/README.md, "Pending sign-ins by state"). */
const PENDING_NAME = /:pending:[0-9a-f]{32}$/;

/** Drops the pending sign-ins that have expired by this clock or do not validate, but those just written. */
function dropExpiredPending(data: Record<string, string>, written: ReadonlySet<string | undefined>): void {
  const now = Date.now();
  for (const [key, value] of Object.entries(data)) {
    if (written.has(key) || !PENDING_NAME.test(key)) continue;
    const record = parsePending(value);
    if (!record || now > record.expiresAt) delete data[key];
  }
}

/**
 * Reads, changes and writes the file under the write lock; `change` says whether anything changed.
 * The changes that come while a rewrite runs are gathered and applied together by the next one, in
 * the order they came, each caller's promise settling once its change is durable (or with the error
 * that kept it from being so): many sessions' writes of one process cost one lock and one write,
 * not one each, so a file shared by many sessions and processes does not queue them past the lock's
 * wait. Expired pending sign-ins are dropped from every file written (but the keys just set).
 */
function update(state: FileState, change: (data: Record<string, string>) => boolean, written?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const entry: Change = { apply: change, written, resolve, reject };
    if (state.gathering) {
      state.gathering.push(entry);
      return;
    }
    state.gathering = [entry];
    const run = () => rewrite(state);
    state.tail = state.tail.then(run, run);
  });
}

/** Applies the gathered changes in one rewrite of the file under the write lock, and settles their callers. */
async function rewrite(state: FileState): Promise<void> {
  const changes = state.gathering ?? [];
  state.gathering = undefined;
  try {
    await locked(state, "write", async (file) => {
      const data = await readForWrite(state, file);
      let changed = false;
      for (const c of changes) changed = c.apply(data) || changed;
      if (changed) {
        dropExpiredPending(data, new Set(changes.map((c) => c.written)));
        await writeDurably(file, data);
      }
      // After the write, not before: a refresh's write is the crash window, kept as short as can be.
      await removeLeftovers(file);
    });
  } catch (e) {
    for (const c of changes) c.reject(e);
    return;
  }
  for (const c of changes) c.resolve();
}

/**
 * Takes the lock directory `<file>.<kind>.lock` beside the (resolved) file (`kind`: `refresh`,
 * `write`, or a session's `<h>.refresh`). The file's directory is
 * made at the first lock (0700); a lock that finds it gone since (removed by hand) makes it again.
 */
async function locked<T>(
  state: FileState,
  kind: string,
  task: (file: string, held: HeldLock) => Promise<T>,
  wait?: LockWaitOptions,
): Promise<T> {
  const file = await target(state.path);
  if (!state.directoryMade) await makeDirectory(state, file);
  const { lockOptions } = state;
  const take = () =>
    withDirLock(`${file}.${kind}.lock`, wait?.until ? { ...lockOptions, until: wait.until } : lockOptions, (held) =>
      task(file, held),
    );
  try {
    return await take();
  } catch (e) {
    if (errno((e as { cause?: unknown }).cause) !== "ENOENT" || !(e instanceof FileStorageError)) throw e;
    await makeDirectory(state, file);
    return take();
  }
}

/** Makes the directory of the token file (0700), if it is not there. */
async function makeDirectory(state: FileState, file: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 }).catch((e: unknown) => {
    throw new FileStorageError(
      "IO_FAILED",
      `cannot create the directory of the token file ${file} (${errno(e) ?? "error"})`,
      file,
      e,
    );
  });
  state.directoryMade = true;
}

/**
 * The text of the file, or `undefined` when there is none. At the storage's first access to it, a
 * mode that lets others read it is tightened first.
 */
async function readText(state: FileState, file: string): Promise<string | undefined> {
  try {
    if (!state.safe.has(file)) await tighten(file);
    state.safe.add(file);
    return await readFile(file, "utf8");
  } catch (e) {
    if (errno(e) === "ENOENT") return undefined;
    if (e instanceof FileStorageError) throw e;
    throw new FileStorageError("IO_FAILED", `cannot read the token file ${file} (${errno(e) ?? "error"})`, file, e);
  }
}

/** Tightens the file's mode to 0600 when others may read it; refuses it when that cannot be done. */
async function tighten(file: string): Promise<void> {
  const { mode } = await stat(file);
  if (mode & 0o077) {
    await chmod(file, 0o600).catch((e: unknown) => {
      const octal = (mode & 0o777).toString(8).padStart(4, "0");
      throw new FileStorageError(
        "FILE_UNSAFE",
        `the token file ${file} may be read by others (mode ${octal}) and cannot be tightened to 0600`,
        file,
        e,
      );
    });
  }
}

/** Moves an unreadable file aside (it may hold the only copy of a refresh token) and says so. */
async function setAside(file: string, what: string): Promise<FileStorageError> {
  const movedTo = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}-${randomBytes(3).toString("hex")}`;
  await rename(file, movedTo).catch((e: unknown) => {
    if (errno(e) !== "ENOENT")
      throw new FileStorageError(
        "IO_FAILED",
        `cannot move the corrupt token file ${file} aside (${errno(e) ?? "error"})`,
        file,
        e,
      );
  });
  return new FileStorageError(
    "FILE_CORRUPT",
    `the token file ${file} was ${what}; moved aside to ${movedTo}: sign in again`,
    file,
    undefined,
    { movedTo, reset: true },
  );
}

/** The file's data, under the write lock; a corrupt file is moved aside and counts as empty. */
async function readForWrite(state: FileState, file: string): Promise<Record<string, string>> {
  const text = await readText(state, file);
  if (text === undefined) return {};
  const what = problem(text);
  if (what === undefined) return JSON.parse(text) as Record<string, string>;
  await setAside(file, what);
  return {};
}

/** Writes `data` durably: temporary file, fsync, rename, fsync of the directory. */
async function writeDurably(file: string, data: Record<string, string>): Promise<void> {
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "wx", 0o600);
    try {
      // The mode of open is masked by the umask; make sure.
      await handle.chmod(0o600);
      await handle.writeFile(JSON.stringify(data));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (e) {
    await unlink(temp).catch(() => {});
    throw new FileStorageError("IO_FAILED", `cannot write the token file ${file} (${errno(e) ?? "error"})`, file, e);
  }
  await syncDirectory(dirname(file)).catch((e: unknown) => {
    throw new FileStorageError(
      "IO_FAILED",
      `cannot make the write of the token file ${file} durable (${errno(e) ?? "error"})`,
      file,
      e,
    );
  });
}

/** Removes the temporary files of writers killed mid-write (only a holder of the write lock writes one). */
async function removeLeftovers(file: string): Promise<void> {
  const prefix = basename(file) + ".";
  const names = await readdir(dirname(file)).catch(() => [] as string[]);
  const leftovers = names.filter((n) => n.startsWith(prefix) && /^[0-9a-f]{12}\.tmp$/.test(n.slice(prefix.length)));
  await Promise.all(leftovers.map((n) => unlink(join(dirname(file), n)).catch(() => {})));
}

/** Makes a rename durable (POSIX). Windows cannot open a directory, and its rename is durable as is. */
async function syncDirectory(directory: string): Promise<void> {
  if (process.platform === "win32") return;
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
