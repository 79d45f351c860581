/**
 * The records this manager writes validate against the shared JSON Schemas of spec/token-store/, which
 * the Python manager's records are tested against too (packages/python/tests/test_token_store_schema.py):
 * the two runtimes share one token file or one Redis key.
 *
 * The schemas use a handful of JSON Schema keywords; a small validator for exactly those is written
 * here (no validator library in this package), and a test fails if a schema uses any other keyword,
 * so that none is silently ignored.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { memoryStorage } from "./storage/memory.js";
import { BASE, CLIENT_ID, setup, signIn, tokenServer } from "./test-support/harness.js";
import { refreshIntents } from "./refresh-intent.js";

const SCHEMAS = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "spec", "token-store");
const TOKENS_KEY = `tenant-integration:${BASE}:${CLIENT_ID}:tokens`;
const INTENT_KEY = `tenant-integration:${BASE}:${CLIENT_ID}:intent`;

type Schema = Record<string, unknown>;
const schema = (name: string): Schema => JSON.parse(readFileSync(join(SCHEMAS, name), "utf8")) as Schema;

/** Annotations, and the assertions the validator below checks. */
const KEYWORDS = new Set([
  "$schema",
  "$id",
  "title",
  "description",
  "type",
  "required",
  "properties",
  "additionalProperties",
  "propertyNames",
  "pattern",
  "minimum",
  "exclusiveMinimum",
]);

const isType = (value: unknown, type: string): boolean =>
  type === "object"
    ? typeof value === "object" && value !== null && !Array.isArray(value)
    : type === "integer"
      ? Number.isInteger(value)
      : type === "number"
        ? typeof value === "number" && Number.isFinite(value)
        : typeof value === type;

/** The errors of `value` against `s`, one string each with the path; empty when it validates. */
function validate(s: Schema, value: unknown, path = "$"): string[] {
  const errors: string[] = [];
  if (typeof s.type === "string" && !isType(value, s.type)) return [`${path}: not ${s.type}`];
  if (typeof s.pattern === "string" && !(typeof value === "string" && new RegExp(s.pattern, "u").test(value)))
    errors.push(`${path}: pattern`);
  if (typeof s.minimum === "number" && !(typeof value === "number" && value >= s.minimum))
    errors.push(`${path}: minimum`);
  if (typeof s.exclusiveMinimum === "number" && !(typeof value === "number" && value > s.exclusiveMinimum))
    errors.push(`${path}: exclusiveMinimum`);
  if (isType(value, "object")) {
    const object = value as Record<string, unknown>;
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    for (const name of (s.required ?? []) as string[]) if (!(name in object)) errors.push(`${path}: ${name} required`);
    for (const [name, item] of Object.entries(object)) {
      if (s.propertyNames) errors.push(...validate(s.propertyNames as Schema, name, `${path} key ${name}`));
      if (properties[name]) errors.push(...validate(properties[name], item, `${path}.${name}`));
      else if (s.additionalProperties === false) errors.push(`${path}.${name}: not allowed`);
      else if (typeof s.additionalProperties === "object")
        errors.push(...validate(s.additionalProperties as Schema, item, `${path}.${name}`));
    }
  }
  return errors;
}

function keywords(s: unknown, found = new Set<string>()): Set<string> {
  if (typeof s !== "object" || s === null) return found;
  for (const [key, value] of Object.entries(s)) {
    found.add(key);
    if (key === "properties") for (const property of Object.values(value as object)) keywords(property, found);
    else if (key === "propertyNames" || key === "additionalProperties") keywords(value, found);
  }
  return found;
}

const TOKEN_RECORD = schema("token-record.schema.json");
const PENDING_RECORD = schema("pending-record.schema.json");
const TOKEN_FILE = schema("token-file.schema.json");
const INTENT_RECORD = schema("intent-record.schema.json");

describe("the token store schemas", () => {
  it("use only the keywords the validator here checks", () => {
    for (const s of [TOKEN_RECORD, PENDING_RECORD, TOKEN_FILE, INTENT_RECORD]) {
      expect(s.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect([...keywords(s)].filter((k) => !KEYWORDS.has(k))).toEqual([]);
    }
  });

  it("refuse what no manager may write (the validator can fail)", () => {
    const good = {
      access_token: "at",
      refresh_token: "rt",
      token_type: "Bearer",
      expires_in: 900,
      received_at: 1,
      id: "a".repeat(43),
      session: "a".repeat(43),
      seq: 0,
    };
    expect(validate(TOKEN_RECORD, good)).toEqual([]);
    const { refresh_token: _, ...withoutRefresh } = good;
    for (const bad of [
      { ...good, id_token: "x" },
      withoutRefresh,
      { ...good, token_type: "mac" },
      { ...good, expires_in: 0 },
      { ...good, received_at: 1.5 },
      { ...good, seq: -1 },
      { ...good, access_token: "a\nb" },
      { ...good, scope: null },
    ]) {
      expect(validate(TOKEN_RECORD, bad)).not.toEqual([]);
    }
    expect(validate(PENDING_RECORD, { state: "s".repeat(43), verifier: "v".repeat(42), expiresAt: 1 })).not.toEqual([]);
    expect(validate(TOKEN_FILE, { other: "x" })).not.toEqual([]);
    const intent = { fingerprint: "0".repeat(64), holder: "h".repeat(43), since: 1, pid: 42, host: "build-7" };
    expect(validate(INTENT_RECORD, intent)).toEqual([]);
    for (const bad of [
      { ...intent, fingerprint: "A".repeat(64) },
      { ...intent, since: 1.5 },
      { ...intent, pid: 0 },
      { ...intent, refresh_token: "rt" },
    ]) {
      expect(validate(INTENT_RECORD, bad)).not.toEqual([]);
    }
  });
});

describe("the records the TypeScript manager writes", () => {
  it("validate: the refresh intent, written before the refresh with a lock of its own, naming the token by the lowercase hex SHA-256 of its UTF-8 bytes", async () => {
    const storage = { ...memoryStorage(), processIdentity: { host: "build-7", pid: 4242, gone: () => false } };
    const h = setup({ storage, lock: (_name, task) => task(), refreshIntents });
    const intents: string[] = [];
    const original = storage.set;
    storage.set = async (key, value) => {
      if (key === INTENT_KEY) intents.push(value);
      await original(key, value);
    };
    await signIn(h.tm);
    h.clock.advance(901_000);
    await h.tm.getAccessToken();
    expect(intents).toHaveLength(1);
    expect(validate(INTENT_RECORD, JSON.parse(intents[0]!))).toEqual([]);
    // Byte for byte what the Python manager writes: this key order, no spaces.
    const { createHash } = await import("node:crypto");
    const holder = (JSON.parse(intents[0]!) as { holder: string }).holder;
    expect(intents[0]).toBe(
      JSON.stringify({
        fingerprint: createHash("sha256").update("rt_1", "utf8").digest("hex"),
        holder,
        since: h.clock.now(),
        pid: 4242,
        host: "build-7",
      }),
    );
    // Deleted once the refreshed tokens are stored.
    expect(await storage.get(INTENT_KEY)).toBeUndefined();
  });

  it("validate: the pending sign-in, the sign-in's tokens, and each refresh's, rotated or not", async () => {
    const storage = memoryStorage();
    const server = tokenServer();
    const h = setup({ storage }, server);
    const written: [Schema, string | null | undefined][] = [];
    const original = storage.set;
    storage.set = async (key, value) => {
      written.push([TOKEN_RECORD, value]);
      await original(key, value);
    };
    const originalExpiring = storage.setExpiring!;
    storage.setExpiring = async (key, value, lifetimeMs) => {
      written.push([key.includes(":pending:") ? PENDING_RECORD : TOKEN_RECORD, value]);
      await originalExpiring(key, value, lifetimeMs);
    };
    await signIn(h.tm);
    for (let i = 0; i < 2; i++) {
      h.clock.advance(901_000);
      await h.tm.getAccessToken();
    }
    // A refresh that does not rotate, and whose response carries a scope.
    server.queue.push(
      () =>
        new Response(
          JSON.stringify({ access_token: "at_x", token_type: "bearer", expires_in: 60, scope: "profile:read" }),
          { status: 200 },
        ),
    );
    h.clock.advance(901_000);
    await h.tm.getAccessToken();
    expect(written.map(([s]) => s)).toEqual([PENDING_RECORD, TOKEN_RECORD, TOKEN_RECORD, TOKEN_RECORD, TOKEN_RECORD]);
    for (const [s, raw] of written) expect(validate(s, JSON.parse(String(raw)))).toEqual([]);
    expect(JSON.parse(String(written.at(-1)?.[1]))).toMatchObject({ scope: "profile:read", seq: 3 });
  });
});
