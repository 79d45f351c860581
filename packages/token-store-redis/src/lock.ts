/**
 * A refresh lock on Redis: a lease (`SET key owner NX PX lease`) that only its owner releases or
 * renews, with a bounded wait. It makes one refresh out of many across processes and machines.
 *
 * @see RFC 9700 §4.14.2 (refresh token rotation), RFC 6749 §6
 */
import type { Lock, LockWaitOptions } from "@tenant-integration/token-manager";
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  isCluster,
  overCluster,
  script,
  send,
  text,
  type RedisClientLike,
  type RedisClusterLike,
  type SendOptions,
} from "./client.js";
import { RedisStorageError } from "./errors.js";
import { checkPrefix, redisKey } from "./keys.js";
import { storageFailed } from "./storage-failed.js";
import { announceRelease, watchReleases, type ReleaseWatch } from "./wake.js";

/**
 * Options of {@link redisLock} (and of `redisStorage`, which passes them on). All are optional;
 * {@link redisLock} throws `INVALID_OPTIONS` for a duration that is not a finite number > 0, or a
 * renewal period not shorter than the lease.
 *
 * @example
 * ```ts
 * const options: RedisLockOptions = { prefix: "billing-app:", leaseMs: 15_000, waitTimeoutMs: 60_000 };
 * ```
 * @see RFC 9700 §4.14.2, RFC 6749 §6
 */
export interface RedisLockOptions {
  /**
   * Put before every key (the lock's and the storage's), e.g. `"myapp:"` in a shared Redis (default
   * `""`). No `{` or `}`: a brace would move the hash tag that keeps a session in one cluster slot.
   */
  prefix?: string;
  /**
   * How long a lease lasts without renewal, in milliseconds (default 10 000). A holder that dies
   * (`kill -9`, a lost machine) blocks the others for at most this long.
   */
  leaseMs?: number;
  /** How often a running task's lease is renewed, in milliseconds (default a third of `leaseMs`). Less than `leaseMs`. */
  renewEveryMs?: number;
  /**
   * How long to wait for a lock held by another owner before giving up with `LOCK_TIMEOUT`, in
   * milliseconds (default 45 000: longer than the token manager's slowest refresh, three attempts
   * of 10 s with backoff, so a live holder is waited for).
   */
  waitTimeoutMs?: number;
  /**
   * The first pause between two tries while waiting without a subscription to the lock's releases,
   * in milliseconds (default 20); doubles up to `maxRetryDelayMs`, with jitter.
   */
  retryDelayMs?: number;
  /**
   * The longest pause between two tries while waiting, in milliseconds (default 500): the pause of
   * a waiter subscribed to the lock's releases, which a release's message ends at once.
   */
  maxRetryDelayMs?: number;
  /**
   * How long to wait for the reply to each command, in milliseconds (default 5 000, node-redis's
   * own command timeout and redis-py's socket timeout). A Redis that stops answering with its
   * connections open (a stopped process, a lost network) then fails a call with `COMMAND_FAILED`
   * (the lock's commands: `STORAGE_FAILED`, cause `LOCK_UNAVAILABLE`) instead of blocking it for as long as the outage lasts.
   */
  commandTimeoutMs?: number;
  /**
   * Called when a running task's lease was lost: a renewal found another owner or no lock, no
   * renewal succeeded for a whole lease, or the release found the lock no longer this owner's. The task cannot be stopped and goes on (see the README,
   * "What the store guarantees"). Default: `console.warn` of the error's message (a key name and a
   * duration, never a value).
   */
  onLeaseLost?: (error: RedisStorageError) => void;
}

/** Deletes the key only if it still holds this owner's value. */
const RELEASE = script(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`);
/** Extends the lease only if the key still holds this owner's value. */
const RENEW = script(
  `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`,
);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** A timer that does not keep a Node process alive (a renewal must not delay exit). */
const unref = (timer: unknown) => (timer as { unref?(): void }).unref?.();

/** The wait for the lock ended because its `until` check said so: the task did not run (the file lock's twin). */
class LockWaitEnded extends Error {
  override readonly name = "LockWaitEnded";
  readonly code = "LOCK_WAIT_ENDED";
  constructor(key: string) {
    super(`the wait for the lock ${key} ended: no longer needed`);
  }
}

/**
 * A lock command whose Redis failure is the storage's failure: `STORAGE_FAILED` (the token manager's
 * code for the same outage met by a read or a write), the store's `LOCK_UNAVAILABLE` as cause.
 */
async function sendForLock(
  client: RedisClientLike,
  args: string[],
  key: string,
  options: SendOptions,
): Promise<unknown> {
  try {
    return await send(client, args, key, { ...options, code: "LOCK_UNAVAILABLE" });
  } catch (e) {
    throw e instanceof RedisStorageError ? storageFailed(e) : e;
  }
}

/** Deletes the key if it still holds `owner`, and then announces the release to the waiters. */
async function releaseOwn(client: RedisClientLike, key: string, owner: string, timeoutMs: number): Promise<unknown> {
  const released = await RELEASE.run(client, key, [owner], { timeoutMs });
  if (Number(released) === 1) await announceRelease(client, key, timeoutMs);
  return released;
}

/** Checks that `value` is a finite number > 0 and returns it. */
function positive(name: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0))
    throw new RedisStorageError("INVALID_OPTIONS", `${name} must be a finite number > 0`);
  return value;
}

/** A random owner value: 128 bits from WebCrypto, so no other holder can guess or repeat it. */
function newOwner(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Creates a {@link Lock} on a single Redis server. Each call takes the key of `name` after `prefix`
 * (`<prefix>tenant-integration:{<origin>:<clientId>}:lock`, see the README's "Keys") with
 * `SET key owner NX PX leaseMs` (a random owner value), retrying with exponential backoff and
 * jitter until it gets it or `waitTimeoutMs` runs out, and waking at once when the holder announces
 * its release (`PUBLISH <key>:released`, heard on a connection of the waiter's own from
 * `client.duplicate()`, open for the wait only; without one it polls); renews the lease every `renewEveryMs` while
 * the task runs (compare-and-`PEXPIRE`); and releases it when the task settles (compare-and-`DEL`),
 * so a lock taken over by someone else after an expiry is never released by the late holder (which
 * reports the lost lease to `onLeaseLost`). The task gets a `HeldLock` whose `isHeld()` reads the key
 * (`GET`) and says whether it still holds this owner's value: the token manager asks right before a
 * refresh request leaves, and sends nothing when a paused holder's lease was taken over.
 * `redisStorage` carries one, so most apps never call this.
 *
 * Every command waits for its reply at most `commandTimeoutMs`, so a call settles within
 * `waitTimeoutMs + commandTimeoutMs` even when Redis stops answering with its connections open.
 *
 * @throws {@link RedisStorageError} `INVALID_OPTIONS` at once for a bad option, a prefix holding `{` or
 * `}`, or a Redis Cluster client (use {@link redisClusterLock}). The returned lock
 * rejects with `LOCK_TIMEOUT` (a `RedisStorageError`) when the wait runs out; with the token manager's
 * `TokenManagerError` `STORAGE_FAILED` (cause: a `RedisStorageError` `LOCK_UNAVAILABLE` saying which
 * command failed and why) when Redis fails, or gives no reply within `commandTimeoutMs`, while the
 * lock is taken (or checked by `isHeld`): the code a failed read or write of the storage gets, so
 * an outage is one code at every step; or with the task's own error.
 * @example
 * ```ts
 * import { createClient } from "redis";
 * const client = await createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }).connect();
 * const lock = redisLock(client, { leaseMs: 10_000 });
 * await lock("tenant-integration:https://acme.tenant.test:demo:lock", async () => refreshOnce());
 * ```
 * @see RFC 9700 §4.14.2 (a reused refresh token revokes the family), RFC 6749 §6;
 * https://redis.io/docs/latest/develop/clients/patterns/distributed-locks/ (single-instance lock)
 */
export function redisLock(client: RedisClientLike, options: RedisLockOptions = {}): Lock {
  return lockOn(singleServer(client, "redisLock", "redisClusterLock"), options);
}

/**
 * {@link redisLock} on a Redis Cluster (or Valkey cluster): the same lock, each command sent to the
 * primary of the lock key's slot; waiters subscribe on the cluster's pub/sub connection (a
 * `PUBLISH` on any node reaches it).
 *
 * @throws {@link RedisStorageError} `INVALID_OPTIONS` at once for a bad option, or for a
 * single-server client (use {@link redisLock}). The returned lock rejects as {@link redisLock}'s.
 * @example
 * ```ts
 * import { createCluster } from "redis";
 * const cluster = await createCluster({
 *   rootNodes: [{ url: "redis://127.0.0.1:7000" }],
 *   topologyRefreshOnReconnectionAttemptStrategy: 250, // reach a failover's new primary in time
 * }).connect();
 * const lock = redisClusterLock(cluster);
 * await lock("tenant-integration:https://acme.tenant.test:demo:lock", async () => refreshOnce());
 * ```
 * @see RFC 9700 §4.14.2; https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/
 */
export function redisClusterLock(cluster: RedisClusterLike, options: RedisLockOptions = {}): Lock {
  return lockOn(clusterClient(cluster, "redisClusterLock", "redisLock"), options);
}

/** Refuses a cluster client given to a single-server factory (its commands would not be routed to their slot). */
export function singleServer(client: RedisClientLike, factory: string, instead: string): RedisClientLike {
  if (isCluster(client)) {
    throw new RedisStorageError(
      "INVALID_OPTIONS",
      `${factory} was given a Redis Cluster client (createCluster): use ${instead}, which sends each command to the node of its key's slot`,
    );
  }
  return client;
}

/** Refuses a single-server client given to a cluster factory; the store's client for the cluster otherwise. */
export function clusterClient(cluster: RedisClusterLike, factory: string, instead: string): RedisClientLike {
  if (!isCluster(cluster)) {
    throw new RedisStorageError(
      "INVALID_OPTIONS",
      `${factory} was given a client that is not a Redis Cluster client (createCluster() of the redis package): use ${instead} for a single Redis server`,
    );
  }
  return overCluster(cluster);
}

/** The lock of {@link redisLock} and {@link redisClusterLock}, over a client that sends each command to its key's node. */
export function lockOn(client: RedisClientLike, options: RedisLockOptions = {}): Lock {
  const settings = lockSettings(options);
  return async (name, task, wait) => {
    const key = redisKey(settings.prefix, name);
    const owner = newOwner();
    await acquire(client, settings, key, owner, wait?.until);
    const { release, isHeld } = hold(client, settings, key, owner);
    try {
      return await task({ isHeld });
    } finally {
      await release();
    }
  };
}

/** A lock's options, checked, with their defaults: what {@link acquire} and {@link hold} work by. */
interface LockSettings {
  prefix: string;
  leaseMs: number;
  renewEveryMs: number;
  waitTimeoutMs: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  commandTimeoutMs: number;
  onLeaseLost: (e: RedisStorageError) => void;
}

/** Checks `options` and fills in the defaults. @throws {@link RedisStorageError} `INVALID_OPTIONS` */
function lockSettings(options: RedisLockOptions): LockSettings {
  const leaseMs = Math.ceil(positive("leaseMs", options.leaseMs ?? 10_000));
  const renewEveryMs = positive("renewEveryMs", options.renewEveryMs ?? Math.floor(leaseMs / 3));
  if (renewEveryMs >= leaseMs) throw new RedisStorageError("INVALID_OPTIONS", "renewEveryMs must be less than leaseMs");
  return {
    prefix: checkPrefix(options.prefix ?? ""),
    leaseMs,
    renewEveryMs,
    waitTimeoutMs: positive("waitTimeoutMs", options.waitTimeoutMs ?? 45_000),
    retryDelayMs: positive("retryDelayMs", options.retryDelayMs ?? 20),
    maxRetryDelayMs: positive("maxRetryDelayMs", options.maxRetryDelayMs ?? 500),
    commandTimeoutMs: positive("commandTimeoutMs", options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS),
    onLeaseLost: options.onLeaseLost ?? ((e: RedisStorageError) => console.warn(e.message)),
  };
}

/**
 * Tries until the lock is ours or the wait runs out. While another owner holds it, the wait ends
 * early on a release announced on the lock's channel (see wake.ts), else after the backoff pause;
 * after either, `until` (when given) may end the wait without the lock.
 */
async function acquire(
  client: RedisClientLike,
  settings: LockSettings,
  key: string,
  owner: string,
  until: LockWaitOptions["until"],
): Promise<void> {
  const { leaseMs, waitTimeoutMs, retryDelayMs, maxRetryDelayMs, commandTimeoutMs } = settings;
  // performance.now() is monotonic: a wall clock moved by NTP (or by a test) does not bend the wait.
  const deadline = performance.now() + waitTimeoutMs;
  let watch: ReleaseWatch | undefined;
  // A SET whose reply comes after its deadline (the server resumed) may have taken the lock:
  // released at once then, so that nobody waits out the lease. Whose reply never comes, it
  // expires after leaseMs.
  const late = (taken: unknown) => {
    if (taken !== null) releaseOwn(client, key, owner, commandTimeoutMs).catch(() => {});
  };
  const take = () =>
    sendForLock(client, ["SET", key, owner, "NX", "PX", String(leaseMs)], key, {
      timeoutMs: commandTimeoutMs,
      late,
    });
  try {
    for (let attempt = 0; ; attempt++) {
      if ((await take()) !== null) return;
      const left = deadline - performance.now();
      if (left <= 0)
        throw new RedisStorageError("LOCK_TIMEOUT", `${key} still held by another owner after ${waitTimeoutMs} ms`);
      if (attempt === 0) {
        // Subscribed before the next try, so a release between the two tries is not missed.
        watch = await watchReleases(client, key, Math.min(commandTimeoutMs, left));
        if (watch) continue;
      }
      // Jitter in the upper half of the pause, so a fleet released together does not retry in step.
      // A release message ends the pause at once: one SET per waiter per release, one wins. So a
      // subscribed waiter polls only for a release no message tells of (a lease that ran out, a
      // denied PUBLISH), every maxRetryDelayMs: polling on the short backoff as well, a fleet's
      // waiters sent several SETs and reads per wait while the holder refreshed, and on a busy
      // machine that load slowed every holder (issue 39). Unsubscribed, it polls on the backoff.
      const backoff = watch ? maxRetryDelayMs : Math.min(maxRetryDelayMs, retryDelayMs * 2 ** attempt);
      const pause = Math.min(deadline - performance.now(), backoff / 2 + (Math.random() * backoff) / 2);
      await (watch ? watch.next(pause) : sleep(pause));
      if (until && (await until())) throw new LockWaitEnded(key);
    }
  } finally {
    watch?.close();
  }
}

/**
 * Holds a taken lock: renews the lease until `release()`, which deletes the key if still ours.
 * A loss is reported once: by a renewal that finds another owner (or none), by renewals failing
 * for a whole lease, or by the release finding the key no longer ours (a loss that happened
 * between two renewals, or while this process was paused and its timers could not run).
 * Renewal and release never throw: a failure is reported as `LEASE_LOST` or ignored.
 */
function hold(client: RedisClientLike, settings: LockSettings, key: string, owner: string) {
  const { leaseMs, renewEveryMs, commandTimeoutMs, onLeaseLost } = settings;
  const timed = { timeoutMs: commandTimeoutMs };
  let stopped = false;
  let reported = false;
  let timer: unknown;
  let renewedAt = performance.now();
  const lost = (why: string, cause?: unknown) => {
    stopped = true;
    if (reported) return;
    reported = true;
    try {
      onLeaseLost(
        new RedisStorageError("LEASE_LOST", `${key}: ${why}; the task under the lock was not stopped`, cause),
      );
    } catch {
      // A throwing callback must not become an unhandled rejection on a timer that crashes the process.
    }
  };
  const renew = async () => {
    try {
      const reply = await RENEW.run(client, key, [owner, String(leaseMs)], timed);
      if (stopped) return;
      if (Number(reply) !== 1) return lost("a renewal found another owner, or no lock");
      renewedAt = performance.now();
    } catch (e) {
      if (stopped) return;
      // A failed renewal is tried again; once a whole lease passed without one, the lease is gone.
      if (performance.now() - renewedAt >= leaseMs) return lost(`no renewal succeeded for ${leaseMs} ms`, e);
    }
    schedule();
  };
  // A chain of timeouts, not an interval: a slow renewal never overlaps the next one.
  const schedule = () => unref((timer = setTimeout(renew, renewEveryMs)));
  schedule();
  /** Whether the lease is still this owner's: a fresh `GET`, after no loss was seen. */
  const isHeld = async (): Promise<boolean> => {
    if (stopped) return false;
    const value = text(await sendForLock(client, ["GET", key], key, timed));
    if (value === owner) return true;
    lost("the lease was found taken over (or expired) before the task's next step");
    return false;
  };
  const release = async () => {
    stopped = true;
    clearTimeout(timer as Parameters<typeof clearTimeout>[0]);
    let released: unknown;
    try {
      released = await releaseOwn(client, key, owner, commandTimeoutMs);
    } catch {
      // A failed release only leaves the lease to expire (at most leaseMs): the task's outcome stands.
      return;
    }
    if (Number(released) !== 1)
      lost("at release the lock was no longer this owner's (the lease expired under the task)");
  };
  return { release, isHeld };
}
