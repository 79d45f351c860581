/**
 * The part of a Redis client the store uses: one method that sends a command and resolves with the
 * reply. node-redis clients (`redis` v5 and v6, `createClient()` once connected) have it as is.
 */
import { RedisStoreError } from "./errors.js";

/**
 * A connected Redis (or Valkey) client: `createClient()` of the `redis` package, after `connect()`.
 * Only `sendCommand` is used, so a wrapper (to count or trace commands) works too.
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * const client: RedisClientLike = await createClient({ url: "redis://127.0.0.1:6379" }).connect();
 * ```
 * @see https://github.com/redis/node-redis (sendCommand); RFC 6749 §10.4 (the values it carries are secrets)
 */
export interface RedisClientLike {
  /** Sends `args` (the command name, then its arguments) and resolves with the reply. */
  sendCommand(args: string[]): Promise<unknown>;
}

/** The codes a failed command is reported with: `LOCK_UNAVAILABLE` while taking the lock. */
export type FailureCode = "COMMAND_FAILED" | "LOCK_UNAVAILABLE";

/**
 * Sends one command; a failure becomes a {@link RedisStoreError} naming the command and `key` only
 * (the other arguments may hold a value).
 */
export async function send(client: RedisClientLike, args: string[], key: string, code: FailureCode = "COMMAND_FAILED"): Promise<unknown> {
  try {
    return await client.sendCommand(args);
  } catch (e) {
    throw new RedisStoreError(code, `Redis ${args[0]} of ${key} failed`, e);
  }
}

/** A reply as a string: node-redis answers bulk strings as strings, or as bytes under a type mapping. */
export function text(reply: unknown): string | null | undefined {
  if (typeof reply === "string" || reply === null) return reply;
  if (reply instanceof Uint8Array) return new TextDecoder().decode(reply);
  return undefined;
}

/** A Lua script run by its SHA-1 (EVALSHA), loaded with EVAL when the server does not know it yet. */
export interface Script {
  run(client: RedisClientLike, key: string, args: string[], code?: FailureCode): Promise<unknown>;
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
    async run(client, key, args, code) {
      try {
        return await client.sendCommand(["EVALSHA", await (sha ??= digest()), "1", key, ...args]);
      } catch (e) {
        if (!String((e as Error | undefined)?.message).startsWith("NOSCRIPT")) {
          throw new RedisStoreError(code ?? "COMMAND_FAILED", `Redis EVALSHA on ${key} failed`, e);
        }
      }
      return send(client, ["EVAL", body, "1", key, ...args], key, code);
    },
  };
}
