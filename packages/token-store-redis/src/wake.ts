/**
 * Waking the waiters of a Redis lock when its holder lets it go (issue 28), by pub/sub: the protocol
 * every kit speaks, in spec/token-store/README.md, "Redis: waking waiters". A message only shortens a
 * wait: a waiter that cannot subscribe, or whose message never comes, polls as before.
 */
import { send, type RedisClientLike } from "./client.js";

/**
 * The part of a second node-redis connection that waiters subscribe on: what `client.duplicate()`
 * returns (not yet connected).
 *
 * @example
 * ```ts
 * const subscriber: RedisSubscriberLike = client.duplicate();
 * ```
 * @see https://redis.io/docs/latest/develop/interact/pubsub/
 */
export interface RedisSubscriberLike {
  on(event: "error", listener: (error: Error) => void): unknown;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => unknown): Promise<unknown>;
  destroy(): void;
  /** Lets the process exit while the connection is open (node-redis has it). */
  unref?(): void;
}

/** The channel a lock's release is announced on: the lock key (prefix included) and `:released`. */
export function releasedChannel(key: string): string {
  return `${key}:released`;
}

/**
 * Announces that the lock `key` was let go: `PUBLISH <key>:released ""` (the message carries
 * nothing). Called only after this owner's own compare-and-`DEL` deleted the key. A failure (an ACL
 * denying `PUBLISH`, Redis gone) is ignored: the waiters poll.
 */
export async function announceRelease(client: RedisClientLike, key: string, timeoutMs: number): Promise<void> {
  await send(client, ["PUBLISH", releasedChannel(key), ""], key, { timeoutMs }).catch(() => {});
}

/** A waiter's watch on a lock's releases, for one wait. */
export interface ReleaseWatch {
  /** Resolves when a release was announced (since the last call) or after `ms`, whichever is first. */
  next(ms: number): Promise<void>;
  /** Ends the watch; idempotent. The shared subscription stays (see {@link watchReleases}). */
  close(): void;
}

/**
 * The subscriber connection of one client, shared by every lock and every wait on that client: the
 * channels it is subscribed to, and the waiters each message wakes.
 */
interface Listener {
  subscriber: RedisSubscriberLike;
  ready: Promise<void>;
  channels: Map<string, Promise<void>>;
  waiters: Map<string, Set<() => void>>;
}

const listeners = new WeakMap<RedisClientLike, Listener>();
/** Clients whose `end` event closes their listener: hooked once each. */
const hooked = new WeakSet<RedisClientLike>();
/** Clients whose server refused SUBSCRIBE (an ACL: NOPERM): their waiters poll, without asking again. */
const refused = new WeakSet<RedisClientLike>();
/** Clients whose last subscription failed otherwise, and until when (performance.now()) their waiters poll. */
const pollUntil = new WeakMap<RedisClientLike, number>();
/** How long the waiters of a client whose subscription failed poll before it is tried again. */
const RETRY_SUBSCRIPTION_MS = 60_000;

/** Resolves with `promise`, or rejects once `ms` passed. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(reject, ms, new Error(`no answer within ${ms} ms`))),
  );
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function destroy(client: RedisClientLike, listener: Listener): void {
  if (listeners.get(client) === listener) listeners.delete(client);
  try {
    listener.subscriber.destroy();
  } catch {
    // Never connected, or already gone: nothing left open.
  }
}

/**
 * The client's listener, created at its first wait: `client.duplicate()`, connected, and unref'd,
 * so that it never keeps a process alive. It stays open for the client's life (node-redis subscribes
 * again after a reconnect), one connection per client however many storages and locks share it,
 * and is closed with the client (its `end` event). `undefined` when the client has no `duplicate`.
 */
function listenerOf(client: RedisClientLike): Listener | undefined {
  const existing = listeners.get(client);
  if (existing) return existing;
  if (typeof client.duplicate !== "function") return undefined;
  const subscriber = client.duplicate();
  // Its connection errors are events: unheard, they would crash the process.
  subscriber.on("error", () => {});
  const listener: Listener = {
    subscriber,
    ready: subscriber.connect().then(() => subscriber.unref?.()),
    channels: new Map(),
    waiters: new Map(),
  };
  listener.ready.catch(() => destroy(client, listener));
  listeners.set(client, listener);
  if (!hooked.has(client)) {
    hooked.add(client);
    // node-redis emits `end` when the client is closed (not on a reconnect).
    (client as { on?: (event: "end", listener: () => void) => unknown }).on?.("end", () => {
      const current = listeners.get(client);
      if (current) destroy(client, current);
    });
  }
  return listener;
}

/**
 * Watches the releases of the lock `key`: subscribes the client's listener (see `listenerOf`) to
 * `<key>:released` if it is not yet, and resolves once the subscription is confirmed, so that a
 * retry made after it cannot miss a release. `undefined` when there is no subscription to be had:
 * the client has no `duplicate` (a wrapper), the connection or the `SUBSCRIBE` failed (an ACL
 * without it: `NOPERM`, remembered for the client), or no confirmation came within `timeoutMs`
 * (then the client's waiters poll for a minute before it is tried again). Never rejects.
 */
export async function watchReleases(
  client: RedisClientLike,
  key: string,
  timeoutMs: number,
): Promise<ReleaseWatch | undefined> {
  if (refused.has(client) || performance.now() < (pollUntil.get(client) ?? 0)) return undefined;
  let listener: Listener | undefined;
  const channel = releasedChannel(key);
  try {
    listener = listenerOf(client);
    if (!listener) return undefined;
    const own = listener;
    let subscribed = own.channels.get(channel);
    if (!subscribed) {
      const wake = () => own.waiters.get(channel)?.forEach((waiter) => waiter());
      subscribed = own.ready.then(() => own.subscriber.subscribe(channel, wake)).then(() => {});
      own.channels.set(channel, subscribed);
      subscribed.catch((e: unknown) => {
        if (own.channels.get(channel) === subscribed) own.channels.delete(channel);
        if (String((e as Error | undefined)?.message).startsWith("NOPERM")) refused.add(client);
      });
    }
    await within(subscribed, timeoutMs);
  } catch {
    // Started afresh after a pause, so that a connection that cannot be had (maxclients, a proxy
    // without pub/sub) costs one wait its timeout, not every wait.
    if (listener) destroy(client, listener);
    pollUntil.set(client, performance.now() + RETRY_SUBSCRIPTION_MS);
    return undefined;
  }
  const waiters = listener.waiters.get(channel) ?? new Set<() => void>();
  listener.waiters.set(channel, waiters);
  let announced = false;
  let wake: (() => void) | undefined;
  const onRelease = () => {
    announced = true;
    wake?.();
  };
  waiters.add(onRelease);
  const next = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(pause);
        wake = undefined;
        announced = false;
        resolve();
      };
      const pause = setTimeout(done, ms);
      if (announced) done();
      else wake = done;
    });
  return { next, close: () => void waiters.delete(onRelease) };
}
