/**
 * The sessions format every kit shares (spec/token-store/README.md, "Sessions"), read from
 * spec/token-store/vectors/sessions.json rather than copied: the session id rule and its message,
 * the names of a scope, the file lock directories, the pending keys and records, the browser
 * binding and its rule. The Go and Python kits' tests read the same file.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { bindingHash, checkBinding } from "./binding.js";
import { createSessionManager, createSessions } from "./sessions.js";
import { refuseBound } from "./sign-in.js";
import { scopeKeys } from "./manager-state.js";
import { logSessionTo } from "./logger.js";
import { fileStorage } from "./node/file-storage.js";
import { parsePending, pendingKey, serializePending, type PendingRecord } from "./pending.js";
import { checkSessionId } from "./session-id.js";
import { memoryStorage } from "./storage/memory.js";
import type { TokenStorage } from "./storage/storage.js";
import { failure } from "./test-support/failure.js";
import { BASE, CLIENT_ID, REDIRECT_URI, setup, signIn, tokenServer } from "./test-support/harness.js";
import { createTokenManager } from "./token-manager.js";

const VECTORS = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "spec", "token-store", "vectors");

interface Vectors {
  sessionIds: { valid: { id: string }[]; invalid: { id: string; code: string; message: string; note: string }[] };
  scopes: {
    origin: string;
    clientId: string;
    session: string | null;
    names: Record<"tokens" | "intent" | "lock", string>;
    file: string;
    fileLocks: { refresh: string; write: string };
  }[];
  pending: { origin: string; clientId: string; state: string; key: string; name: string }[];
  pendingRecords: { record?: PendingRecord; text: string; valid: boolean; note: string }[];
  bindings: { binding: string; browser: string }[];
  bindingChecks: { browser: string | null; binding: string | null; outcome: string; note: string }[];
}

const vectors = JSON.parse(readFileSync(join(VECTORS, "sessions.json"), "utf8")) as Vectors;

/** A memory storage that records every key written, and whether it was read at all. */
function watched(): TokenStorage & { written: string[]; touched: number } {
  const inner = memoryStorage();
  const storage = {
    written: [] as string[],
    touched: 0,
    get: (key: string) => (storage.touched++, inner.get(key)),
    set: (key: string, value: string) => (storage.touched++, storage.written.push(key), inner.set(key, value)),
    delete: (key: string) => (storage.touched++, inner.delete(key)),
    setExpiring: (key: string, value: string, ms: number) => (
      storage.touched++, storage.written.push(key), inner.setExpiring!(key, value, ms)
    ),
    take: (key: string) => (storage.touched++, inner.take!(key)),
  };
  return storage;
}

describe("the session id", () => {
  it.each(vectors.sessionIds.valid.map((v) => [v.id]))("accepts %j", (id) => {
    expect(checkSessionId(id)).toBe(id);
    const options = {
      baseUrl: BASE,
      clientId: CLIENT_ID,
      redirectUri: REDIRECT_URI,
      scopes: ["profile:read"] as const,
    };
    expect(() => createSessionManager({ ...options, sessionId: id })).not.toThrow();
    expect(() => createSessions(options).manager(id)).not.toThrow();
  });

  it.each(vectors.sessionIds.invalid.map((v) => [v.note, v]))(
    "refuses %s with INVALID_SESSION_ID and the shared message, before the storage is touched",
    async (_note, v) => {
      expect(() => checkSessionId(v.id)).toThrow(failure("INVALID_SESSION_ID"));
      expect(() => checkSessionId(v.id)).toThrow(`INVALID_SESSION_ID: ${v.message}`);
      const storage = watched();
      const options = {
        baseUrl: BASE,
        clientId: CLIENT_ID,
        redirectUri: REDIRECT_URI,
        scopes: ["profile:read"] as const,
      };
      expect(() => createSessionManager({ ...options, storage, sessionId: v.id })).toThrow(
        `INVALID_SESSION_ID: ${v.message}`,
      );
      const sessions = createSessions({ ...options, storage });
      expect(() => sessions.manager(v.id)).toThrow(`INVALID_SESSION_ID: ${v.message}`);
      await expect(sessions.beginSignIn({ session: v.id })).rejects.toThrow(`INVALID_SESSION_ID: ${v.message}`);
      expect(storage.touched).toBe(0);
    },
  );

  it("is not an option of createTokenManager, whose manager keeps one session per storage: refused, not ignored", () => {
    const storage = watched();
    const options = {
      baseUrl: BASE,
      clientId: CLIENT_ID,
      redirectUri: REDIRECT_URI,
      scopes: ["profile:read"] as const,
    };
    // A session id taken as the storage's one session would give every user the same tokens.
    expect(() => createTokenManager({ ...options, storage, sessionId: "ada" } as never)).toThrow(
      "INVALID_OPTIONS: sessionId: the manager of one session is createSessionManager({ ...options, sessionId })",
    );
    expect(storage.touched).toBe(0);
  });

  it("refuses a value that is not a string", () => {
    expect(() => checkSessionId(42)).toThrow(failure("INVALID_SESSION_ID"));
  });
});

describe("the names of a scope", () => {
  it.each(vectors.scopes.map((v) => [v.session ?? "no session", v]))("for %s are the shared ones", (_s, v) => {
    const keys = scopeKeys(v.origin, v.clientId, v.session ?? undefined);
    expect({ tokens: keys.tokens, intent: keys.intent, lock: keys.lock }).toEqual(v.names);
  });

  it("are where a manager with a session id keeps its tokens, and a manager without one is as before", async () => {
    const storage = watched();
    const server = tokenServer();
    const withId = setup({ storage, sessionId: "auth0|64f1c2a9e1b7" }, server);
    await signIn(withId.tm);
    const without = setup({ storage }, server);
    await signIn(without.tm);
    const tokenNames = storage.written.filter((k) => k.endsWith(":tokens"));
    expect(tokenNames).toEqual([
      `tenant-integration:${BASE}:${CLIENT_ID}:auth0|64f1c2a9e1b7:tokens`,
      `tenant-integration:${BASE}:${CLIENT_ID}:tokens`,
    ]);
    // Two sessions of one storage: each manager reads its own.
    await withId.tm.signOut();
    expect(await withId.tm.isSignedIn()).toBe(false);
    expect(await without.tm.isSignedIn()).toBe(true);
  });
});

describe("the file lock directories", () => {
  it.each(
    vectors.scopes
      .filter((v) => v.origin === "https://acme.tenant.test" && v.clientId === "demo")
      .map((v) => [v.session ?? "no session", v]),
  )("of %s are the shared ones, beside the token file", async (_s, v) => {
    const dir = mkdtempSync(join(tmpdir(), "ti-session-locks-"));
    const file = join(dir, basename(v.file));
    const storage = fileStorage(file);
    const expected = join(dir, basename(v.fileLocks.refresh));
    let seen: string[] = [];
    await storage.lock(
      v.names.lock,
      async () => {
        seen = readdirSync(dir).filter((n) => n.endsWith(".lock"));
      },
      v.session === null ? {} : { sessionId: v.session },
    );
    expect(seen).toEqual([basename(expected)]);
    expect(existsSync(expected)).toBe(false);
  });

  it("let one session's refresh run while another's lock is held", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ti-session-locks-"));
    const storage = fileStorage(join(dir, "tokens.json"), { lockTimeoutMs: 2000 });
    const a = scopeKeys(BASE, CLIENT_ID, "a").lock;
    const b = scopeKeys(BASE, CLIENT_ID, "b").lock;
    const order: string[] = [];
    await storage.lock(
      a,
      async () => {
        await storage.lock(b, async () => void order.push("b ran while a held"), { sessionId: "b" });
      },
      { sessionId: "a" },
    );
    expect(order).toEqual(["b ran while a held"]);
  });
});

describe("pending sign-ins by state", () => {
  it.each(vectors.pending.map((v) => [v.state, v]))(
    "the key and name of state %s are the shared ones",
    async (_s, v) => {
      const key = await pendingKey(v.state);
      expect(key).toBe(v.key);
      expect(scopeKeys(v.origin, v.clientId).pending + key).toBe(v.name);
    },
  );

  it.each(vectors.pendingRecords.map((v) => [v.note, v]))("record: %s", (_n, v) => {
    if (v.valid) {
      expect(parsePending(v.text)).toEqual(v.record);
      expect(serializePending(v.record as PendingRecord)).toBe(v.text);
    } else expect(parsePending(v.text)).toBeUndefined();
  });

  it("are found by state: two sign-ins begun at once both complete, in either order", async () => {
    const h = setup();
    const first = await h.tm.beginAuthorization();
    const second = await h.tm.beginAuthorization();
    const callback = (url: string) =>
      `${REDIRECT_URI}?code=c&state=${encodeURIComponent(new URL(url).searchParams.get("state") ?? "")}`;
    await expect(h.tm.completeAuthorization(callback(second.url))).resolves.toMatchObject({
      expiresAt: expect.any(Number),
    });
    await expect(h.tm.completeAuthorization(callback(first.url))).resolves.toMatchObject({
      expiresAt: expect.any(Number),
    });
    // Single use: the same callback again finds nothing.
    await expect(h.tm.completeAuthorization(callback(first.url))).rejects.toThrow(failure("NO_PENDING_SIGN_IN"));
  });

  it("are stored under their own name with the pending lifetime, the state never in a name", async () => {
    const storage = watched();
    const h = setup({ storage, pendingLifetimeMs: 1234 });
    const { url } = await h.tm.beginAuthorization();
    const state = new URL(url).searchParams.get("state") ?? "";
    expect(storage.written).toEqual([`tenant-integration:${BASE}:${CLIENT_ID}:pending:${await pendingKey(state)}`]);
    expect(storage.written.join()).not.toContain(state);
  });

  it("of a manager with a session are refused by a manager of another session, and used up", async () => {
    const storage = memoryStorage();
    const server = tokenServer();
    const ada = setup({ storage, sessionId: "ada" }, server);
    const bob = setup({ storage, sessionId: "bob" }, server);
    const { url } = await ada.tm.beginAuthorization();
    const callback = `${REDIRECT_URI}?code=c&state=${new URL(url).searchParams.get("state")}`;
    await expect(bob.tm.completeAuthorization(callback)).rejects.toThrow("the sign-in was started for another session");
    await expect(ada.tm.completeAuthorization(callback)).rejects.toThrow(failure("NO_PENDING_SIGN_IN"));
    expect(bob.calls).toHaveLength(0);
  });

  it("expire in the memory storage, and are taken once", async () => {
    const storage = memoryStorage();
    await storage.setExpiring!("k", "v", 1);
    await new Promise((r) => setTimeout(r, 5));
    expect(await storage.take!("k")).toBeUndefined();
    await storage.setExpiring!("k", "v", 60_000);
    expect(await Promise.all([storage.take!("k"), storage.take!("k")])).toEqual(["v", undefined]);
  });
});

describe("the browser binding", () => {
  it.each(vectors.bindings.map((v) => [v.binding, v]))("of %s hashes to the shared value", async (_b, v) => {
    expect(await bindingHash(v.binding)).toBe(v.browser);
  });

  it.each(vectors.bindingChecks.map((v) => [v.note, v]))("rule: %s", async (_n, v) => {
    const check = checkBinding(v.browser ?? undefined, v.binding ?? undefined);
    if (v.outcome === "accept") await expect(check).resolves.toBeUndefined();
    else await expect(check).rejects.toThrow(failure(v.outcome as "STATE_MISMATCH"));
  });

  it.each(vectors.bindingChecks.filter((v) => v.binding === null).map((v) => [v.note, v]))(
    "rule without a binding at the callback (a manager of one session, which ships no binding code): %s",
    (_n, v) => {
      const check = () => refuseBound(v.browser ?? undefined);
      if (v.outcome === "accept") expect(check).not.toThrow();
      else expect(check).toThrow(failure(v.outcome as "STATE_MISMATCH"));
    },
  );
});

describe("the logs of a session", () => {
  const lines = (level: "debug" | "info") => {
    const written: unknown[] = [];
    const sink = (fields: unknown) => void written.push(fields);
    const logger = logSessionTo({ debug: sink, info: sink, warn: sink, error: sink }, level);
    return { written, logger };
  };

  it("carry its id at debug level, on every line", async () => {
    const { written, logger } = lines("debug");
    await signIn(setup({ logger, sessionId: "ada@example.org" }).tm);
    expect(written.length).toBeGreaterThan(0);
    for (const fields of written) expect(fields).toMatchObject({ sessionId: "ada@example.org" });
  });

  it("never show it at any other level (it may be personal data)", async () => {
    const { written, logger } = lines("info");
    await signIn(setup({ logger, sessionId: "ada@example.org" }).tm);
    expect(written.length).toBeGreaterThan(0);
    expect(JSON.stringify(written)).not.toContain("ada@example.org");
  });
});
