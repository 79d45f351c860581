/**
 * The part of a Redis client the store uses: one method that sends a command and resolves with the
 * reply. node-redis clients (`redis` v5 and v6, `createClient()` once connected) have it as is.
 */
import { RedisStorageError } from "./errors.js";
import type { RedisSubscriberLike } from "./wake.js";

/**
 * A connected Redis (or Valkey) client: `createClient()` of the `redis` package, after `connect()`.
 * Only `sendCommand` is used, so a wrapper (to count or trace commands) works too; a wrapper should
 * pass `options` on, so that a command the store gave up on is dropped from the client's offline
 * queue instead of being sent once Redis is back.
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * const client: RedisClientLike = await createClient({ url: "redis://127.0.0.1:6379" }).connect();
 * ```
 * @see https://github.com/redis/node-redis (sendCommand); RFC 6749 §10.4 (the values it carries are secrets)
 */
export interface RedisClientLike {
  /**
   * Sends `args` (the command name, then its arguments) and resolves with the reply. `abortSignal`
   * (node-redis's command option) fires when the store stops waiting for the reply.
   */
  sendCommand(args: string[], options?: { abortSignal?: AbortSignal }): Promise<unknown>;
  /**
   * A new, unconnected client with the same options (node-redis's `duplicate()`): a waiter for the
   * lock subscribes on it to be woken when the holder lets go, and closes it when its wait ends.
   * Without it (a wrapper that only sends commands), waiters poll.
   */
  duplicate?(): RedisSubscriberLike;
}

/**
 * A connected Redis Cluster client (or Valkey cluster): `createCluster()` of the `redis` package,
 * after `connect()`. Each command is sent with the Redis key it concerns as `firstKey`, so it goes to
 * the primary of that key's slot (never to a replica: `isReadonly` is `false`), where node-redis
 * follows MOVED and ASK redirections; waiters subscribe on the cluster itself (its pub/sub
 * connection).
 *
 * @example
 * ```ts
 * import { createCluster } from "redis";
 * const cluster: RedisClusterLike = await createCluster({
 *   rootNodes: [{ url: "redis://127.0.0.1:7000" }],
 *   topologyRefreshOnReconnectionAttemptStrategy: 250, // reach a failover's new primary in time
 * }).connect();
 * ```
 * @see https://github.com/redis/node-redis/blob/master/docs/clustering.md
 */
export interface RedisClusterLike {
  /** node-redis's cluster `sendCommand`: routed by `firstKey`. */
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
    options?: { abortSignal?: AbortSignal },
  ): Promise<unknown>;
  /** The cluster's primaries (node-redis keeps them up to date): what tells a cluster client from a single-server one. */
  readonly masters: readonly unknown[];
  /** Classic pub/sub on the cluster's pub/sub connection: a `PUBLISH` on any node reaches it. */
  subscribe?(channel: string, listener: ClusterListener): Promise<unknown>;
  unsubscribe?(channel: string, listener: ClusterListener): Promise<unknown>;
}

/** A cluster's pub/sub listener: node-redis hands it strings, or bytes in buffer mode. */
type ClusterListener = (message: string | Uint8Array, channel: string | Uint8Array) => unknown;

/** Whether `client` is a node-redis cluster (it has `masters`), not a single-server client. */
export function isCluster(client: unknown): client is RedisClusterLike {
  return typeof client === "object" && client !== null && Array.isArray((client as { masters?: unknown }).masters);
}

/** How each cluster's commands are sent: by the key they concern. Keyed by the client made for the cluster. */
const routers = new WeakMap<
  RedisClientLike,
  (args: string[], key: string, options: { abortSignal: AbortSignal }) => Promise<unknown>
>();
/** One client per cluster, so that every storage and lock on a cluster shares its wake-up subscription. */
const overClusters = new WeakMap<RedisClusterLike, RedisClientLike>();

/**
 * The client the store uses for a cluster: its commands routed by their key (the store always knows
 * it: `WAIT` goes with the key just written, to the node that took the write), and a subscriber that
 * is the cluster's own pub/sub connection.
 */
export function overCluster(cluster: RedisClusterLike): RedisClientLike {
  const existing = overClusters.get(cluster);
  if (existing) return existing;
  const client: RedisClientLike = {
    sendCommand: (args, options) => cluster.sendCommand(undefined, false, args, options),
  };
  if (typeof cluster.subscribe === "function") client.duplicate = () => clusterSubscriber(cluster);
  routers.set(client, (args, key, options) => cluster.sendCommand(key, false, args, options));
  overClusters.set(cluster, client);
  return client;
}

/** The cluster's own subscription, shaped as a second connection; `destroy` only unsubscribes what it subscribed. */
function clusterSubscriber(cluster: RedisClusterLike): RedisSubscriberLike {
  const subscribed: [string, ClusterListener][] = [];
  return {
    on: () => undefined,
    connect: async () => undefined,
    async subscribe(channel, listener) {
      const heard: ClusterListener = (message, from) => listener(String(message), String(from));
      await cluster.subscribe!(channel, heard);
      subscribed.push([channel, heard]);
    },
    destroy() {
      for (const [channel, listener] of subscribed.splice(0)) cluster.unsubscribe?.(channel, listener).catch(() => {});
    },
  };
}

/**
 * The default of `commandTimeoutMs`: node-redis's own command timeout, and redis-py's socket
 * timeout (the Python kit's bound), so both kits give up on a silent Redis at the same moment.
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

/** The codes a failed command is reported with: `LOCK_UNAVAILABLE` for the lock's commands. */
export type FailureCode = "COMMAND_FAILED" | "LOCK_UNAVAILABLE";

/**
 * How one command is sent: the deadline for its reply, the code a failure gets, and what to do
 * with a reply that comes after the deadline (the command may still have run).
 */
export interface SendOptions {
  /** Milliseconds to wait for the reply (`commandTimeoutMs`); then the command fails. */
  timeoutMs: number;
  code?: FailureCode;
  late?: (reply: unknown) => void;
}

/**
 * Sends one command and waits for its reply at most `timeoutMs`; a failure, or no reply in time,
 * becomes a {@link RedisStorageError} naming the command and `key` only (the other arguments may hold
 * a value).
 *
 * node-redis bounds only the wait of a command not yet written (its `commandOptions.timeout`): a
 * command written to a server that stopped answering (SIGSTOP, a lost network) waits
 * for as long as the connection stays open, minutes or forever. Hence a deadline of our own. At the
 * deadline the command's `abortSignal` fires too, so that one still queued offline is never sent
 * later: a stale `SET` landing after a reconnect could overwrite newer tokens.
 */
export async function send(
  client: RedisClientLike,
  args: string[],
  key: string,
  { timeoutMs, code = "COMMAND_FAILED", late }: SendOptions,
): Promise<unknown> {
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      const error = new DOMException(`no reply within ${timeoutMs} ms`, "TimeoutError");
      // Rejected before the abort, whose AbortError would otherwise win the race.
      reject(error);
      abort.abort(error);
    }, timeoutMs);
  });
  let reply: Promise<unknown> | undefined;
  try {
    const routed = routers.get(client);
    reply = routed
      ? routed(args, key, { abortSignal: abort.signal })
      : client.sendCommand(args, { abortSignal: abort.signal });
    return await Promise.race([reply, deadline]);
  } catch (e) {
    if (!timedOut) throw new RedisStorageError(code, `Redis ${args[0]} of ${key} failed: ${why(e)}`, e);
    // The reply may still come (the server resumes): it is settled here, never unhandled.
    reply?.then(late, () => {});
    throw new RedisStorageError(
      code,
      `Redis ${args[0]} of ${key} got no answer within ${timeoutMs} ms (timed out: Redis stopped answering, or could not be reached)`,
      e,
    );
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why a command failed, in words that name no value: the connection's fate for the errors node-redis
 * gives when Redis cannot be reached, a key holding a value of another type (`WRONGTYPE`: not the
 * kit's, never overwritten), and only the first word of any other error reply (its code, such as
 * `NOPERM` or `READONLY`).
 */
export function why(error: unknown): string {
  const e = (error ?? {}) as { message?: unknown; code?: unknown; constructor?: { name?: unknown } };
  const message = String(e.message ?? "");
  // node-redis's error classes keep the name "Error": their constructor (or their fixed message) says which.
  const kind = typeof e.constructor?.name === "string" ? e.constructor.name : "Error";
  if (e.code === "ECONNREFUSED" || message.includes("ECONNREFUSED"))
    return "Redis could not be reached (connection refused)";
  if (kind === "ClientOfflineError" || message === "The client is offline")
    return "Redis could not be reached (the client is offline, reconnecting)";
  if (kind === "SocketClosedUnexpectedlyError" || message === "Socket closed unexpectedly")
    return "Redis could not be reached (the connection closed)";
  if (kind === "ClientClosedError" || message === "The client is closed") return "the client is closed";
  if (typeof e.code === "string" && /^E[A-Z]+$/.test(e.code)) return `Redis could not be reached (${e.code})`;
  if (kind === "ErrorReply" || kind === "SimpleError" || kind === "BlobError") {
    const reply = message.split(" ")[0];
    // Another Redis type under the key (a hash, a list…): the kit writes strings only, so the value
    // is another application's, and it is left as it is (DECISIONS D2).
    if (reply === "WRONGTYPE")
      return "the key holds a value of another Redis type, which this kit did not write (another application's data?); it is left as it is (WRONGTYPE)";
    return `Redis answered an error (${reply})`;
  }
  return kind;
}

/** A reply as a string: node-redis answers bulk strings as strings, or as bytes under a type mapping. */
export function text(reply: unknown): string | null | undefined {
  if (typeof reply === "string" || reply === null) return reply;
  if (reply instanceof Uint8Array) return new TextDecoder().decode(reply);
  return undefined;
}

/** A Lua script run by its SHA-1 (EVALSHA), loaded with EVAL when the server does not know it yet. */
export interface Script {
  run(client: RedisClientLike, key: string, args: string[], options: SendOptions): Promise<unknown>;
}

/**
 * Makes a one-key script. EVALSHA saves sending the body on every call; a server that restarted,
 * failed over or ran SCRIPT FLUSH answers NOSCRIPT, and EVAL then runs (and caches) the body.
 *
 * @see https://redis.io/docs/latest/develop/programmability/eval-intro/ (script cache)
 */
export function script(body: string): Script {
  let sha: Promise<string> | undefined;
  const digest = async () => {
    const bytes = new Uint8Array(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(body)));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  };
  return {
    async run(client, key, args, options) {
      try {
        return await send(client, ["EVALSHA", await (sha ??= digest()), "1", key, ...args], key, options);
      } catch (e) {
        const reason = (e as RedisStorageError).cause as Error | undefined;
        if (!String(reason?.message).startsWith("NOSCRIPT")) throw e;
      }
      return send(client, ["EVAL", body, "1", key, ...args], key, options);
    },
  };
}
