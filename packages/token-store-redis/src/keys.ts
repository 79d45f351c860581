/**
 * The Redis key of each of the token manager's names (issue 31): the session part wrapped in a hash
 * tag, so that the keys of one session share one Redis Cluster hash slot. The scheme every kit
 * speaks, in spec/token-store/README.md, "Redis keys: one hash slot per session".
 */
import { RedisStorageError } from "./errors.js";

/**
 * The manager's names of a scope: `tenant-integration:<scope>:<kind>`, `<scope>` being
 * `<origin>:<clientId>` or, for a session, `<origin>:<clientId>:<session>`; the hash tag is everything between.
 */
const MANAGER_NAME = /^tenant-integration:(.+):(tokens|pending|intent|lock)$/;
/** A pending sign-in's name: `tenant-integration:<origin>:<clientId>:pending:<key>`; it belongs to no session. */
const PENDING_NAME = /^tenant-integration:(.+):pending:([0-9a-f]{32})$/;

/**
 * The Redis key of the manager's `name` after `prefix`:
 * `<prefix>tenant-integration:{<scope>}:<kind>` (`<scope>`: `<origin>:<clientId>`, and `:<session>`
 * for a session), and for a pending sign-in `<prefix>tenant-integration:{<origin>:<clientId>}:pending:<key>`
 * (spec/token-store/README.md, "Names and keys"). A cluster hashes only the text between the first
 * `{` and the next `}`, so `:tokens`, `:intent` and `:lock` of one session land in one slot, on one
 * node, and different sessions spread over the cluster. A name not of the manager's form (the manager never makes one) is used
 * as it is, after the prefix. The same key on a single server and on a cluster.
 *
 * @example
 * ```ts
 * redisKey("billing:", "tenant-integration:https://acme.tenant.test:demo:tokens");
 * // "billing:tenant-integration:{https://acme.tenant.test:demo}:tokens"
 * redisKey("billing:", "tenant-integration:https://acme.tenant.test:demo:42:tokens");
 * // "billing:tenant-integration:{https://acme.tenant.test:demo:42}:tokens"
 * ```
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags
 */
export function redisKey(prefix: string, name: string): string {
  const pending = PENDING_NAME.exec(name);
  if (pending) return `${prefix}tenant-integration:{${pending[1]}}:pending:${pending[2]}`;
  const match = MANAGER_NAME.exec(name);
  return match ? `${prefix}tenant-integration:{${match[1]}}:${match[2]}` : prefix + name;
}

/**
 * Checks the key prefix: a `{` or `}` in it would move the hash tag (a cluster takes the first `{`),
 * so the keys of one session could hash to different slots and its scripts fail with CROSSSLOT or
 * land on different nodes.
 *
 * @throws {@link RedisStorageError} `INVALID_OPTIONS` for a prefix that is not a string or holds a brace.
 */
export function checkPrefix(prefix: unknown): string {
  if (typeof prefix !== "string") throw new RedisStorageError("INVALID_OPTIONS", "prefix must be a string");
  if (/[{}]/.test(prefix)) {
    throw new RedisStorageError(
      "INVALID_OPTIONS",
      `prefix ${JSON.stringify(prefix)} holds "{" or "}": a brace would move the hash tag that keeps the keys of one session in one Redis Cluster slot, and split the session across slots`,
    );
  }
  return prefix;
}
