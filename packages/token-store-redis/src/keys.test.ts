/**
 * The Redis key scheme (issue 31) without a server: the session part of each of the manager's names
 * in one hash tag, so the keys of a session share one cluster slot; a prefix that would move the tag
 * is refused; a cluster client given to a single-server factory, or the reverse, is refused.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RedisClientType, RedisClusterType } from "redis";
import { describe, expect, it, vi } from "vitest";
import {
  redisClusterLock,
  redisClusterStorage,
  redisKey,
  redisLock,
  redisStorage,
  type RedisClusterLike,
} from "./index.js";

/** The CRC16 (XMODEM) slot Redis Cluster gives a key: the hash tag's text when it has one. */
function slot(key: string): number {
  const open = key.indexOf("{");
  const close = open >= 0 ? key.indexOf("}", open + 1) : -1;
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of new TextEncoder().encode(hashed)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

const KINDS = ["tokens", "pending", "intent", "lock"];

describe("redisKey", () => {
  it("wraps <origin>:<clientId> in a hash tag, after the prefix", () => {
    expect(redisKey("billing:", "tenant-integration:https://acme.tenant.test:demo:tokens")).toBe(
      "billing:tenant-integration:{https://acme.tenant.test:demo}:tokens",
    );
    expect(redisKey("", "tenant-integration:http://127.0.0.1:4010:cli:lock")).toBe(
      "tenant-integration:{http://127.0.0.1:4010:cli}:lock",
    );
  });

  it.each([
    ["https://acme.tenant.test", "demo"],
    ["http://127.0.0.1:4010", "client:with:colons"],
    ["https://acme.tenant.test", "odd}id{"],
  ])("puts the four keys of the session %s / %s in one slot", (origin, clientId) => {
    const slots = new Set(
      KINDS.map((kind) => slot(redisKey("app:", `tenant-integration:${origin}:${clientId}:${kind}`))),
    );
    expect(slots.size).toBe(1);
  });

  it("keeps the CRC16 slot of a known key (checked with CLUSTER KEYSLOT on redis-server 7.0)", () => {
    // A guard on the slot function above: `CLUSTER KEYSLOT foo` is 12182, `{user1000}.following` 3443.
    expect(slot("foo")).toBe(12182);
    expect(slot("{user1000}.following")).toBe(3443);
  });

  it("uses a name not of the manager's form as it is, after the prefix", () => {
    expect(redisKey("p:", "lock")).toBe("p:lock");
  });
});

const client = { sendCommand: vi.fn(async () => null) };
const cluster: RedisClusterLike = { masters: [], sendCommand: vi.fn(async () => null) };

describe("bad input", () => {
  it.each(["app{", "{tenant}:", "}"])(
    "refuses the prefix %j with INVALID_OPTIONS saying it would split a session across slots",
    (prefix) => {
      for (const make of [
        () => redisStorage(client, { prefix }),
        () => redisLock(client, { prefix }),
        () => redisClusterStorage(cluster, { prefix }),
        () => redisClusterLock(cluster, { prefix }),
      ]) {
        expect(make).toThrow(
          expect.objectContaining({
            name: "RedisStorageError",
            code: "INVALID_OPTIONS",
            message: expect.stringContaining("split the session across slots"),
          }),
        );
      }
    },
  );

  it("refuses a cluster client given to redisStorage or redisLock, naming the cluster factory", () => {
    expect(() => redisStorage(cluster as never)).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: expect.stringContaining("use redisClusterStorage") }),
    );
    expect(() => redisLock(cluster as never)).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: expect.stringContaining("use redisClusterLock") }),
    );
  });

  it("refuses a single-server client given to redisClusterStorage or redisClusterLock, naming the single-server factory", () => {
    expect(() => redisClusterStorage(client as never)).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: expect.stringContaining("use redisStorage") }),
    );
    expect(() => redisClusterLock(client as never)).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: expect.stringContaining("use redisLock") }),
    );
    expect(client.sendCommand).not.toHaveBeenCalled();
  });
});

describe("the factories' types", () => {
  it("do not compile a node-redis cluster client given to redisStorage, or a single-server client given to redisClusterStorage", () => {
    // Checked by `tsc` (pnpm typecheck): each line below must fail to compile.
    const misuse = (client: RedisClientType, cluster: RedisClusterType) => {
      // @ts-expect-error a cluster's sendCommand takes a routing key first
      redisStorage(cluster);
      // @ts-expect-error a single-server client has no `masters`
      redisClusterStorage(client);
      redisStorage(client);
      redisClusterStorage(cluster);
    };
    expect(typeof misuse).toBe("function");
  });
});

describe("redisKey of sessions and pending sign-ins (spec/token-store/vectors/sessions.json)", () => {
  const vectors = JSON.parse(
    readFileSync(
      join(dirname(fileURLToPath(import.meta.url)), "../../../spec/token-store/vectors/sessions.json"),
      "utf8",
    ),
  ) as {
    scopes: { prefix: string; names: Record<string, string>; redisKeys: Record<string, string>; slot: number }[];
    pending: { prefix: string; name: string; redisKey: string; slot: number }[];
  };

  it.each(vectors.scopes.map((v) => [v.names["tokens"], v]))(
    "maps the names of %s to the shared keys and slot",
    (_n, v) => {
      for (const kind of ["tokens", "intent", "lock"]) {
        const key = redisKey(v.prefix, v.names[kind] as string);
        expect(key).toBe(v.redisKeys[kind]);
        expect(slot(key)).toBe(v.slot);
      }
    },
  );

  it.each(vectors.pending.map((v) => [v.name, v]))(
    "maps the pending sign-in %s to the shared key and slot",
    (_n, v) => {
      expect(redisKey(v.prefix, v.name)).toBe(v.redisKey);
      expect(slot(v.redisKey)).toBe(v.slot);
    },
  );
});
