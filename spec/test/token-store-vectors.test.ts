// The test vectors of the token store's sessions (token-store/vectors/sessions.json) are what the
// rules of token-store/README.md give, the README's example tables are what the vectors hold, the
// schemas admit what the kits will write, and no two scopes of one client meet. Every kit's tests
// read the vectors; this file makes sure they read the rules.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM script without types
import { checkTokenStore } from "../scripts/token-store.mjs";
import {
  bindingCookie,
  bindingOutcome,
  browserOf,
  fileLocks,
  hashSlot,
  isBindingCookieValue,
  KINDS,
  nameOf,
  pendingKey,
  pendingName,
  pendingRecordText,
  postgresRow,
  redisKey,
  scopeOf,
  sessionIdProblem,
} from "./support/token-store.js";

const specDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const storeDir = join(specDir, "token-store");
const readJson = (path: string) => JSON.parse(readFileSync(join(storeDir, path), "utf8"));
const vectors = readJson("vectors/sessions.json");
const readme = readFileSync(join(storeDir, "README.md"), "utf8");

const ajv = new Ajv2020.default({ strict: true, allErrors: true });
const validator = (file: string) => ajv.compile(readJson(file));
const validPending = validator("pending-record.schema.json");
const validTokenFile = validator("token-file.schema.json");

type Scope = (typeof vectors.scopes)[number];

describe("the token store's lint step", () => {
  it("finds the schemas and the vectors as they are sound", () => {
    expect(checkTokenStore({ specDir })).toEqual([]);
  });
});

describe("session ids", () => {
  it("accepts every valid id of the vectors, and so does the pending record's schema", () => {
    for (const { id } of vectors.sessionIds.valid) {
      expect(sessionIdProblem(id), id).toBeUndefined();
      expect(validPending({ state: "A".repeat(43), verifier: "v".repeat(43), expiresAt: 0, sessionId: id }), id).toBe(
        true,
      );
    }
  });

  it("refuses every invalid id with the message of the vectors, and so does the schema", () => {
    for (const { id, code, message } of vectors.sessionIds.invalid) {
      expect(code).toBe("INVALID_SESSION_ID");
      expect(sessionIdProblem(id), JSON.stringify(id)).toBe(message);
      expect(validPending({ state: "A".repeat(43), verifier: "v".repeat(43), expiresAt: 0, sessionId: id })).toBe(
        false,
      );
    }
  });

  it("never shows more than 16 characters of a bad id, nor a control character", () => {
    for (const { id, message } of vectors.sessionIds.invalid) {
      const shown = /^invalid session id "(.*?)": /.exec(message)?.[1] ?? "";
      const characters = shown.replace(/\.\.\.$/, "").match(/\\u\{[0-9A-F]+\}|./gu) ?? [];
      expect(characters.length).toBe(Math.min(16, Array.from(id).length));
      expect(message).toMatch(/^[\x20-\x7E]+$/);
    }
  });
});

describe("names, Redis keys and lock directories of a scope", () => {
  it("are what the rules give, for every scope of the vectors", () => {
    for (const v of vectors.scopes as Scope[]) {
      const scope = scopeOf(v.origin, v.clientId, v.session);
      const names = Object.fromEntries(KINDS.map((kind) => [kind, nameOf(scope, kind)]));
      const keys = Object.fromEntries(KINDS.map((kind) => [kind, redisKey(v.prefix, nameOf(scope, kind))]));
      expect({ scope: v.scope, names: v.names, redisKeys: v.redisKeys, channel: v.channel }).toEqual({
        scope,
        names,
        redisKeys: keys,
        channel: `${keys["lock"]}:released`,
      });
      expect(v.fileLocks).toEqual(fileLocks(v.file, scope, v.session));
    }
  });

  it("keep every key of a scope in the scope's one hash slot", () => {
    for (const v of vectors.scopes as Scope[]) {
      for (const kind of KINDS) expect(hashSlot(v.redisKeys[kind]), v.redisKeys[kind]).toBe(v.slot);
    }
  });

  it("wrap the scope in the hash tag: with a session, the session's own slot", () => {
    const [none, session] = (vectors.scopes as Scope[]).filter((v) => v.origin === "https://acme.tenant.test");
    expect(none?.session).toBeNull();
    expect(session?.session).toBe("42");
    expect(session?.redisKeys.tokens).toBe("billing:tenant-integration:{https://acme.tenant.test:demo:42}:tokens");
    expect(session?.slot).not.toBe(none?.slot);
  });
});

describe("PostgreSQL rows", () => {
  it("are the records' key columns, split after the storage's origin and client id, for every scope and pending sign-in", () => {
    for (const v of vectors.scopes as Scope[]) {
      const rows = {
        tokens: postgresRow(v.origin, v.clientId, v.names.tokens),
        intent: postgresRow(v.origin, v.clientId, v.names.intent),
      };
      expect(v.postgresRows, v.scope).toEqual(rows);
      expect(postgresRow(v.origin, v.clientId, v.names.lock), "a lock is no row").toBeUndefined();
    }
    for (const v of vectors.pending) expect(v.postgresRow).toEqual(postgresRow(v.origin, v.clientId, v.name));
  });

  it("never meet: no two names of one client share a row, even with a client id that holds a colon", () => {
    const names = [
      ...(vectors.scopes as Scope[]).flatMap((v) => [v.names.tokens, v.names.intent].map((name) => [v, name] as const)),
      ...vectors.pending.map((v: { origin: string; clientId: string; name: string }) => [v, v.name] as const),
    ];
    const seen = new Map<string, string>();
    for (const [v, name] of names) {
      const key = JSON.stringify(postgresRow(v.origin, v.clientId, name));
      expect(seen.get(key) ?? name, key).toBe(name);
      seen.set(key, name);
    }
    const colon = (vectors.scopes as Scope[]).find((v) => v.clientId.includes(":") && v.session !== null);
    expect(colon?.postgresRows.tokens).toMatchObject({ client_id: colon?.clientId, session: colon?.session });
  });
});

describe("pending sign-ins by state", () => {
  it("are keyed by the first 32 hex digits of SHA-256(state), in the client's slot", () => {
    for (const v of vectors.pending) {
      const name = pendingName(v.origin, v.clientId, v.state);
      expect({ key: v.key, name: v.name, redisKey: v.redisKey, slot: v.slot }).toEqual({
        key: pendingKey(v.state),
        name,
        redisKey: redisKey(v.prefix, name),
        slot: hashSlot(redisKey(v.prefix, nameOf(scopeOf(v.origin, v.clientId, null), "tokens"))),
      });
      expect(v.name).not.toContain(v.state);
    }
  });

  it("are written as the vectors' texts, which the schema admits; the invalid texts it refuses", () => {
    for (const entry of vectors.pendingRecords) {
      if (entry.valid) expect(entry.text).toBe(pendingRecordText(entry.record));
      expect(validPending(JSON.parse(entry.text)), entry.note).toBe(entry.valid);
    }
  });

  it("live in a token file beside the sessions' records, which the token file schema admits", () => {
    const file: Record<string, string> = {};
    for (const v of vectors.scopes as Scope[]) {
      file[v.names.tokens] = "{}";
      file[v.names.intent] = "{}";
    }
    for (const v of vectors.pending) file[v.name] = "{}";
    file["tenant-integration:https://acme.tenant.test:demo:pending"] = "{}";
    expect(validTokenFile(file), JSON.stringify(validTokenFile.errors)).toBe(true);
    for (const bad of [
      "tenant-integration:https://acme.tenant.test:demo:lock",
      "tenant-integration:https://acme.tenant.test:demo:pending:13D31E961A1AD8EC2F16B10C4C982E08",
      "tenant-integration:https://acme.tenant.test:demo:pending:13d31e96",
    ])
      expect(validTokenFile({ [bad]: "{}" }), bad).toBe(false);
  });
});

describe("the browser binding", () => {
  it("is stored as SHA-256 of the binding", () => {
    for (const { binding, browser } of vectors.bindings) expect(browserOf(binding)).toBe(browser);
  });

  it("refuses a callback as the vectors say", () => {
    for (const { browser, binding, outcome, note } of vectors.bindingChecks)
      expect(bindingOutcome(browser, binding), note).toBe(outcome);
  });

  it("reuses only a cookie of the binding's form, and sets the cookie of the vectors", () => {
    for (const { value, valid } of vectors.bindingCookieValues) expect(isBindingCookieValue(value), value).toBe(valid);
    for (const { redirectUri, pendingLifetimeMs, ...cookie } of vectors.cookies)
      expect(bindingCookie(redirectUri, pendingLifetimeMs)).toEqual(cookie);
  });
});

describe("no two scopes of one client meet", () => {
  // Every id of up to three characters over the characters nearest the separators, the kind words,
  // and the vectors' ids; the rule keeps the valid ones.
  const alphabet = ["a", "0", "-", ".", "|", "=", ":", "{", "}", "/", " "];
  const short = alphabet.flatMap((a) => [a, ...alphabet.flatMap((b) => [a + b, ...alphabet.map((c) => a + b + c)])]);
  const words = ["", "tokens", "intent", "lock", "pending", "released", "0123456789abcdef0123456789abcdef"];
  const ids = [...vectors.sessionIds.valid, ...vectors.sessionIds.invalid].map((v: { id: string }) => v.id);
  const sessions = [...new Set([...short, ...words, ...ids])].filter((id) => sessionIdProblem(id) === undefined);
  const states: string[] = [...new Set(vectors.pending.map((v: { state: string }) => v.state) as string[])];
  const tagOf = (key: string) => /\{(.*?)\}/.exec(key)?.[1];

  it("takes every id the pending record's schema admits, and no other", () => {
    expect(sessions.length).toBeGreaterThan(250);
    for (const id of new Set([...short, ...words, ...ids]))
      expect(validPending({ state: "A".repeat(43), verifier: "v".repeat(43), expiresAt: 0, sessionId: id }), id).toBe(
        sessionIdProblem(id) === undefined,
      );
  });

  it.each([
    ["https://acme.tenant.test", "demo", "billing:"],
    ["http://127.0.0.1:4010", "urn:app:1", ""],
    ["https://acme.tenant.test", "odd}id", ""],
  ])("%s, client %s: every name and Redis key is distinct", (origin, clientId, prefix) => {
    const names = new Map<string, string>();
    const keys = new Map<string, string>();
    const add = (what: string, name: string) => {
      expect(names.get(name), `${what} and ${names.get(name)} share ${name}`).toBeUndefined();
      names.set(name, what);
      const key = redisKey(prefix, name);
      expect(keys.get(key), `${what} and ${keys.get(key)} share ${key}`).toBeUndefined();
      keys.set(key, what);
    };
    for (const session of [null, ...sessions]) {
      const scope = scopeOf(origin, clientId, session);
      for (const kind of KINDS) add(`${kind} of ${session ?? "no session"}`, nameOf(scope, kind));
    }
    add("the pending record of kits before issue 39", nameOf(scopeOf(origin, clientId, null), "pending"));
    for (const state of states) add(`the pending sign-in of ${state}`, pendingName(origin, clientId, state));
    expect(names.size).toBe((sessions.length + 1) * KINDS.length + 1 + states.length);
  });

  it("maps every name to the key of its own hash tag: the whole scope, or for a pending sign-in the client's", () => {
    const [origin, clientId, prefix] = ["https://acme.tenant.test", "demo", "billing:"];
    for (const session of [null, ...sessions]) {
      const scope = scopeOf(origin, clientId, session);
      for (const kind of KINDS) {
        const key = redisKey(prefix, nameOf(scope, kind));
        expect(key).toBe(`${prefix}tenant-integration:{${scope}}:${kind}`);
        expect(tagOf(key), key).toBe(scope);
      }
    }
    for (const state of states) {
      const key = redisKey(prefix, pendingName(origin, clientId, state));
      expect(key).toBe(`${prefix}tenant-integration:{${origin}:${clientId}}:pending:${pendingKey(state)}`);
    }
  });
});

/** The rows of the README table between `<!-- vectors: <name> -->` and `<!-- /vectors -->`, cells unquoted. */
function readmeTable(name: string): string[][] {
  const start = readme.indexOf(`<!-- vectors: ${name} -->`);
  expect(start, `README.md has no table "vectors: ${name}"`).toBeGreaterThan(-1);
  const end = readme.indexOf("<!-- /vectors -->", start);
  const rows = readme
    .slice(start, end)
    .split("\n")
    .filter((line) => line.startsWith("|"))
    .slice(2);
  expect(rows.length, `the table "vectors: ${name}" has rows`).toBeGreaterThan(0);
  return rows.map((row) =>
    row
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) =>
        cell
          .trim()
          .replace(/\\\|/g, "|")
          .replace(/^`(.*)`$/, "$1"),
      ),
  );
}

describe("the README's examples", () => {
  it("of invalid session ids are the vectors'", () => {
    for (const [json, message] of readmeTable("invalid-session-ids")) {
      const id = JSON.parse(json ?? "");
      const vector = vectors.sessionIds.invalid.find((v: { id: string }) => v.id === id);
      expect(vector, `the vectors have the README's id ${json}`).toBeDefined();
      expect(message).toBe(vector.message);
    }
  });

  it("of names, Redis keys and slots are the vectors'", () => {
    for (const [session, name, key, slot] of readmeTable("scopes")) {
      const vector = (vectors.scopes as Scope[]).find((v) => Object.values(v.names).includes(name));
      expect(vector, `the vectors have the README's name ${name}`).toBeDefined();
      const kind = KINDS.find((k) => vector?.names[k] === name) ?? "tokens";
      expect([session, key, Number(slot)]).toEqual([vector?.session ?? "none", vector?.redisKeys[kind], vector?.slot]);
    }
  });

  it("of file lock directories are the vectors'", () => {
    for (const [session, directory] of readmeTable("file-locks")) {
      const vector = (vectors.scopes as Scope[]).find(
        (v) => v.origin === "https://acme.tenant.test" && v.clientId === "demo" && (v.session ?? "none") === session,
      );
      expect(directory).toBe(vector?.fileLocks.refresh);
    }
  });

  it("of pending keys are the vectors'", () => {
    for (const [state, key, redis] of readmeTable("pending")) {
      const vector = vectors.pending.find(
        (v: { state: string; clientId: string }) => v.state === state && v.clientId === "demo",
      );
      expect([key, redis]).toEqual([vector?.key, vector?.redisKey]);
    }
  });

  it("of browser bindings are the vectors'", () => {
    for (const [binding, browser] of readmeTable("bindings")) {
      expect(browser).toBe(vectors.bindings.find((v: { binding: string }) => v.binding === binding)?.browser);
    }
  });

  it("of a pending record is a text of the vectors", () => {
    expect(readme).toContain(`\n  ${vectors.pendingRecords[1].text}\n`);
  });

  it("of the Redis key scheme name a key of the vectors", () => {
    expect(readme).toContain("`billing:tenant-integration:{https://acme.tenant.test:demo}:tokens`");
    expect(vectors.scopes[0].redisKeys.tokens).toBe(
      "billing:tenant-integration:{https://acme.tenant.test:demo}:tokens",
    );
  });
});
