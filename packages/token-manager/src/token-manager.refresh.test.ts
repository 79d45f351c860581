import { describe, expect, it } from "vitest";
import { OAuthResponseError, SessionEndedError, TransientError } from "./errors.js";
import { failure } from "./test-support/failure.js";
import { type Lock, processLock, webLock, type LockManagerLike } from "./lock.js";
import { memoryStorage } from "./storage/memory.js";
import type { TokenStorage } from "./storage/storage.js";
import {
  BASE,
  CLIENT_ID,
  bodyOf,
  deferred,
  json,
  setup,
  signIn,
  tokenServer,
  tokens,
  type Handler,
} from "./test-support/harness.js";
import { refreshIntents } from "./refresh-intent.js";

const TOKENS_KEY = `tenant-integration:${BASE}:${CLIENT_ID}:tokens`;
/** How long tokens whose write failed are served before the write is tried again. */
const RETRY_PAUSE_MS = 1000;

async function signedIn(overrides: Parameters<typeof setup>[0] = {}, server = tokenServer()) {
  const h = setup(overrides, server);
  await signIn(h.tm);
  h.calls.length = 0;
  return h;
}

function fail(): never {
  throw new Error("clock broken");
}

async function stored(storage: TokenStorage): Promise<{ access_token: string; refresh_token: string } | undefined> {
  const raw = await storage.get(TOKENS_KEY);
  return raw ? (JSON.parse(raw) as { access_token: string; refresh_token: string }) : undefined;
}

describe("getAccessToken on a fresh token", () => {
  it("returns the stored token with no request", async () => {
    const h = await signedIn();
    h.clock.advance(899_000 - 60_000);
    expect(await h.tm.getAccessToken()).toBe("at_1");
    expect(h.calls).toHaveLength(0);
  });

  it("loads the tokens from storage in a new manager, with no request", async () => {
    const h = await signedIn();
    const again = setup({ storage: h.storage });
    expect(await again.tm.getAccessToken()).toBe("at_1");
    expect(again.calls).toHaveLength(0);
  });

  it("throws NOT_SIGNED_IN when there are no tokens, with no request", async () => {
    const h = setup();
    await expect(h.tm.getAccessToken()).rejects.toThrow(failure("NOT_SIGNED_IN"));
    expect(h.calls).toHaveLength(0);
  });

  it("treats an unreadable stored record as no session", async () => {
    const h = setup();
    await h.storage.set(TOKENS_KEY, "{broken");
    await expect(h.tm.getAccessToken()).rejects.toThrow(failure("NOT_SIGNED_IN"));
    await h.storage.set(TOKENS_KEY, JSON.stringify({ access_token: "a" }));
    await expect(h.tm.getAccessToken()).rejects.toThrow(failure("NOT_SIGNED_IN"));
    expect(h.calls).toHaveLength(0);
  });
});

describe("the promise getAccessToken returns (issue 28: the client adds the header without awaiting a promise it has seen resolved)", () => {
  it("is the same resolved promise for every call while the token is fresh", async () => {
    const h = await signedIn();
    const first = h.tm.getAccessToken();
    expect(await first).toBe("at_1");
    h.clock.advance(900_000 - 60_000 - 1);
    expect(h.tm.getAccessToken()).toBe(first);
    expect(h.calls).toHaveLength(0);
  });

  it("is a new one once the clock passes the freshness bound, and then the same one for the refreshed token", async () => {
    const h = await signedIn();
    const first = h.tm.getAccessToken();
    h.clock.advance(900_000 - 60_000);
    const second = h.tm.getAccessToken();
    expect(second).not.toBe(first);
    expect(await second).toBe("at_2");
    expect(h.tm.getAccessToken()).not.toBe(first);
    expect(h.tm.getAccessToken()).toBe(h.tm.getAccessToken());
    expect(await h.tm.getAccessToken()).toBe("at_2");
  });

  it("is never the stale token's past the freshness bound, even when the refresh then fails", async () => {
    const h = await signedIn({ retry: { attempts: 1, baseDelayMs: 0 } });
    const first = h.tm.getAccessToken();
    await first;
    h.server.queue.push(() => new Response("busy", { status: 503 }));
    h.clock.advance(900_000 - 60_000);
    const late = h.tm.getAccessToken();
    expect(late).not.toBe(first);
    await expect(late).rejects.toBeInstanceOf(TransientError);
  });

  it("is a new one after onUnauthorized, for the refreshed token", async () => {
    const h = await signedIn();
    const first = h.tm.getAccessToken();
    h.tm.onUnauthorized(await first);
    const next = h.tm.getAccessToken();
    expect(next).not.toBe(first);
    expect(await next).toBe("at_2");
  });

  it("is not handed out after sign-out, nor after signing in again", async () => {
    const h = await signedIn();
    const first = h.tm.getAccessToken();
    await h.tm.signOut();
    const afterSignOut = h.tm.getAccessToken();
    expect(afterSignOut).not.toBe(first);
    await expect(afterSignOut).rejects.toThrow(failure("NOT_SIGNED_IN"));
    await signIn(h.tm);
    const again = h.tm.getAccessToken();
    expect(again).not.toBe(first);
    expect(await again).toBe("at_2");
  });

  it("rejects (never throws) when the clock throws", async () => {
    let broken = false;
    const h = await signedIn({ now: () => (broken ? fail() : 1_700_000_000_000) });
    broken = true;
    // a synchronous throw would fail the test here, before `expect`
    const pending = h.tm.getAccessToken();
    await expect(pending).rejects.toThrow("clock broken");
  });
});

describe("freshness under skewed clocks (regression: issue 20, a reader a few ms behind the refresher refreshed again)", () => {
  /** Two processes on one storage and one lock, b's clock `skewMs` behind a's (negative: ahead). */
  async function skewed(skewMs: number) {
    const server = tokenServer();
    const storage = memoryStorage();
    const lock = processLock();
    const a = setup({ storage, lock, refreshIntents }, server);
    const b = setup({ storage, lock, refreshIntents }, server);
    b.clock.advance(-skewMs);
    await signIn(a.tm);
    return { a, b, server };
  }

  it.each([1, 5, 200, 30_000])("a record stamped %i ms in this clock's future is fresh: no refresh", async (skewMs) => {
    const { b, server } = await skewed(skewMs);
    expect(await b.tm.getAccessToken()).toBe("at_1");
    expect(server.refreshes).toBe(0);
  });

  it("counts a future-stamped record as received now: it is refreshed one lifetime (less the leeway) later on this clock", async () => {
    const { b } = await skewed(200);
    b.clock.advance(900_000 - 60_000 - 1);
    expect(await b.tm.getAccessToken()).toBe("at_1");
    b.clock.advance(200 + 1);
    expect(await b.tm.getAccessToken()).toBe("at_2");
  });

  it("refreshes a record stamped further in this clock's future than the token lives (a wrong clock, not skew)", async () => {
    const { b, server } = await skewed(900_001);
    expect(await b.tm.getAccessToken()).toBe("at_2");
    expect(server.refreshes).toBe(1);
  });

  it("tells the session's expiry from the record's receive time bounded by this clock", async () => {
    const { a, b } = await skewed(200);
    expect(await b.tm.getSession()).toEqual({ expiresAt: b.clock.now() + 900_000, scope: undefined });
    expect(await a.tm.getSession()).toEqual({ expiresAt: a.clock.now() + 900_000, scope: undefined });
  });

  it.each([5, 200, -200])(
    "two processes whose clocks differ by %i ms make exactly one refresh per expiry, expiry after expiry",
    async (skewMs) => {
      const { a, b, server } = await skewed(skewMs);
      for (let expiry = 1; expiry <= 5; expiry++) {
        a.clock.advance(900_000);
        b.clock.advance(900_000);
        const [first, second] = expiry % 2 ? [a, b] : [b, a];
        const token = await first.tm.getAccessToken();
        expect(await second.tm.getAccessToken()).toBe(token);
        expect(server.refreshes).toBe(expiry);
      }
    },
  );
});

describe("refresh", () => {
  it("refreshes when the token is within the leeway of expiry, checked at use time without timers", async () => {
    const h = await signedIn();
    h.clock.advance(900_000 - 60_000);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0]?.url).toBe(`${BASE}/oauth/token`);
    expect(h.calls[0]?.headers).toMatchObject({ accept: "application/json", "content-type": "application/json" });
    expect(bodyOf(h.calls[0]!)).toEqual({ grant_type: "refresh_token", refresh_token: "rt_1", client_id: CLIENT_ID });
  });

  it("honours a configured leeway", async () => {
    const h = await signedIn({ refreshLeewayMs: 120_000 });
    h.clock.advance(900_000 - 120_001);
    expect(await h.tm.getAccessToken()).toBe("at_1");
    h.clock.advance(1);
    expect(await h.tm.getAccessToken()).toBe("at_2");
  });

  it("caps the leeway at half the lifetime, so a short-lived token is not refreshed on every call", async () => {
    const server = tokenServer();
    const h = setup({ refreshLeewayMs: 60_000 }, server);
    server.queue.push(() => tokens("at_short", "rt_short", 30));
    await signIn(h.tm);
    h.clock.advance(14_000);
    expect(await h.tm.getAccessToken()).toBe("at_short");
    h.clock.advance(1_000);
    expect(await h.tm.getAccessToken()).not.toBe("at_short");
  });

  it("refreshes when the clock went back before the receive time", async () => {
    const h = await signedIn();
    h.clock.advance(-3_600_000);
    expect(await h.tm.getAccessToken()).toBe("at_2");
  });

  it("stores the rotated refresh token in place of the old one", async () => {
    const h = await signedIn();
    h.clock.advance(900_000);
    await h.tm.getAccessToken();
    expect(await stored(h.storage)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
    h.clock.advance(900_000);
    await h.tm.getAccessToken();
    expect(bodyOf(h.calls[1]!)).toMatchObject({ refresh_token: "rt_2" });
  });

  it("keeps the old refresh token when the response has none", async () => {
    const h = await signedIn();
    h.server.queue.push(() => tokens("at_norotate"));
    h.clock.advance(900_000);
    expect(await h.tm.getAccessToken()).toBe("at_norotate");
    expect(await stored(h.storage)).toMatchObject({ access_token: "at_norotate", refresh_token: "rt_1" });
    h.clock.advance(900_000);
    await h.tm.getAccessToken();
    expect(bodyOf(h.calls[1]!)).toMatchObject({ refresh_token: "rt_1" });
  });

  it("hands out the new access token only after the rotated refresh token is persisted", async () => {
    const base = memoryStorage();
    const gate = deferred();
    const writing = deferred();
    let gated = false;
    const storage: TokenStorage = {
      ...base,
      set: async (key, value) => {
        if (gated) {
          writing.resolve();
          await gate.promise;
        }
        await base.set(key, value);
      },
    };
    const h = await signedIn({ storage });
    h.clock.advance(900_000);
    gated = true;
    let handedOut: string | undefined;
    const pending = h.tm.getAccessToken().then((t) => (handedOut = t));
    await writing.promise;
    expect(h.calls).toHaveLength(1);
    expect(handedOut).toBeUndefined();
    expect(await stored(base)).toMatchObject({ refresh_token: "rt_1" });
    gate.resolve();
    await pending;
    expect(handedOut).toBe("at_2");
    expect(await stored(base)).toMatchObject({ refresh_token: "rt_2" });
  });

  it("makes exactly one refresh request for 1,000 concurrent callers on an expired token, and gives all of them the new token", async () => {
    const h = await signedIn();
    h.clock.advance(900_000);
    const results = await Promise.all(Array.from({ length: 1000 }, () => h.tm.getAccessToken()));
    expect(h.calls).toHaveLength(1);
    expect(new Set(results)).toEqual(new Set(["at_2"]));
    expect(h.server.refreshes).toBe(1);
  });

  it("fires tokens-refreshed with the expiry and no token", async () => {
    const h = await signedIn();
    const events: unknown[] = [];
    h.tm.on("tokens-refreshed", (info) => events.push(info));
    h.clock.advance(900_000);
    await h.tm.getAccessToken();
    expect(events).toEqual([{ expiresAt: h.clock.now() + 900_000, scope: undefined }]);
  });
});

describe("a storage that fails on write", () => {
  // Only the tokens' write fails where a lock makes the manager write a refresh intent: an intent
  // that cannot be written stops the refresh before it is sent (no intent, no send, D6).
  const isTokens = (key: string) => key.endsWith(":tokens");

  it("keeps the session when the refreshed tokens cannot be written: hands them out, reports storage-failed, and writes them on the next call without a new request", async () => {
    const base = memoryStorage();
    let failing = false;
    const storage: TokenStorage = {
      ...base,
      set: async (key, value) => {
        if (failing) throw new Error("disk full");
        await base.set(key, value);
      },
    };
    const h = await signedIn({ storage });
    const reported: unknown[] = [];
    h.tm.on("storage-failed", ({ error }) => reported.push(error));
    h.clock.advance(900_000);
    failing = true;
    expect(await Promise.all([h.tm.getAccessToken(), h.tm.getAccessToken()])).toEqual(["at_2", "at_2"]);
    expect(h.calls).toHaveLength(1);
    expect(reported).toEqual([failure("STORAGE_FAILED")]);
    expect((reported[0] as Error).cause).toMatchObject({ message: "disk full" });
    expect(await stored(base)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
    // Within a second of the failure, the token is handed out with no new try of the write.
    h.clock.advance(RETRY_PAUSE_MS - 1);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(reported).toHaveLength(1);
    // Then, still failing: the token is handed out again, the write retried and reported again.
    h.clock.advance(1);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(reported).toHaveLength(2);
    failing = false;
    h.clock.advance(RETRY_PAUSE_MS);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(h.calls).toHaveLength(1);
    expect(reported).toHaveLength(2);
    expect(await stored(base)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
  });

  it("serves the unwritten tokens while they are fresh even when the retry cannot run (the lock unavailable, as with Redis down), and writes them once it can", async () => {
    const base = memoryStorage();
    let writesFail = false;
    let lockDown = false;
    const storage: TokenStorage = {
      ...base,
      set: async (key, value) =>
        writesFail && isTokens(key) ? Promise.reject(new Error("disk full")) : base.set(key, value),
    };
    const lock = <T>(_name: string, task: () => Promise<T>): Promise<T> =>
      lockDown ? Promise.reject(new Error("LOCK_UNAVAILABLE: connection refused")) : task();
    const h = await signedIn({ storage, lock, refreshIntents });
    const reported: Error[] = [];
    h.tm.on("storage-failed", ({ error }) => reported.push(error));
    h.clock.advance(900_000);
    writesFail = true;
    expect(await h.tm.getAccessToken()).toBe("at_2");
    lockDown = true;
    // The one process holding the rotated tokens keeps using them; each failed retry is reported.
    h.clock.advance(RETRY_PAUSE_MS);
    expect(await Promise.all([h.tm.getAccessToken(), h.tm.getAccessToken()])).toEqual(["at_2", "at_2"]);
    expect(reported).toHaveLength(2);
    expect(reported[1]).toEqual(failure("STORAGE_FAILED"));
    expect(reported[1]!.cause).toMatchObject({ message: "LOCK_UNAVAILABLE: connection refused" });
    expect(h.calls).toHaveLength(1);
    lockDown = false;
    writesFail = false;
    h.clock.advance(RETRY_PAUSE_MS);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(await stored(base)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
    expect(reported).toHaveLength(2);
  });

  it("does not serve unwritten tokens past their expiry: without the lock, the call fails with the lock's error", async () => {
    const base = memoryStorage();
    let down = false;
    const storage: TokenStorage = {
      ...base,
      set: async (key, value) =>
        down && isTokens(key) ? Promise.reject(new Error("disk full")) : base.set(key, value),
    };
    const lock = <T>(_name: string, task: () => Promise<T>): Promise<T> =>
      down && h.clock.now() > expiry ? Promise.reject(new Error("LOCK_UNAVAILABLE")) : task();
    const h = await signedIn({ storage, lock, refreshIntents });
    h.clock.advance(900_000);
    const expiry = h.clock.now() + 900_000;
    down = true;
    expect(await h.tm.getAccessToken()).toBe("at_2");
    h.clock.advance(900_000 + 1);
    await expect(h.tm.getAccessToken()).rejects.toThrow("LOCK_UNAVAILABLE");
    expect(h.calls).toHaveLength(1);
  });

  it("does not hand out unwritten tokens that expired while the lock was awaited", async () => {
    const base = memoryStorage();
    let writesFail = false;
    let lockTimesOut = false;
    const storage: TokenStorage = {
      ...base,
      set: async (key, value) =>
        writesFail && isTokens(key) ? Promise.reject(new Error("disk full")) : base.set(key, value),
    };
    // A lock that times out after a wait that outlived the tokens.
    const lock = <T>(_name: string, task: () => Promise<T>): Promise<T> => {
      if (!lockTimesOut) return task();
      h.clock.advance(900_000);
      return Promise.reject(new Error("LOCK_TIMEOUT"));
    };
    const h = await signedIn({ storage, lock, refreshIntents });
    h.clock.advance(900_000);
    writesFail = true;
    expect(await h.tm.getAccessToken()).toBe("at_2");
    lockTimesOut = true;
    h.clock.advance(RETRY_PAUSE_MS);
    await expect(h.tm.getAccessToken()).rejects.toThrow("LOCK_TIMEOUT");
  });

  it("refreshes with the rotated refresh token it could not write, once that record has expired", async () => {
    const base = memoryStorage();
    let failing = false;
    const storage: TokenStorage = {
      ...base,
      set: async (key, value) => (failing ? Promise.reject(new Error("read-only")) : base.set(key, value)),
    };
    const h = await signedIn({ storage });
    h.clock.advance(900_000);
    failing = true;
    expect(await h.tm.getAccessToken()).toBe("at_2");
    h.clock.advance(900_000);
    failing = false;
    expect(await h.tm.getAccessToken()).toBe("at_3");
    expect(bodyOf(h.calls[1]!)).toMatchObject({ refresh_token: "rt_2" });
    expect(await stored(base)).toMatchObject({ access_token: "at_3", refresh_token: "rt_3" });
  });

  it("reports STORAGE_FAILED from a sign-in whose tokens cannot be written, keeps them usable in this process, and writes them on the next call", async () => {
    const base = memoryStorage();
    let failing = true;
    const storage: TokenStorage = {
      ...base,
      set: async (key, value) => (failing ? Promise.reject(new Error("quota")) : base.set(key, value)),
    };
    const h = setup({ storage, pendingStorage: memoryStorage() });
    await expect(signIn(h.tm)).rejects.toThrow(failure("STORAGE_FAILED"));
    expect(await h.tm.getAccessToken()).toBe("at_1");
    expect(await base.get(TOKENS_KEY)).toBeUndefined();
    failing = false;
    h.clock.advance(RETRY_PAUSE_MS);
    expect(await h.tm.getAccessToken()).toBe("at_1");
    expect(await stored(base)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
    expect(h.calls).toHaveLength(1);
  });

  it("never writes its unsaved tokens over newer ones another manager stored meanwhile (regression: rotated-away token put back)", async () => {
    const base = memoryStorage();
    const lock = processLock();
    const server = tokenServer();
    let failingFor: unknown;
    const failingStorage = (owner: unknown): TokenStorage => ({
      ...base,
      set: async (key, value) =>
        failingFor === owner && isTokens(key) ? Promise.reject(new Error("disk full")) : base.set(key, value),
    });
    const a = setup({ storage: failingStorage("a"), lock, refreshIntents }, server);
    await signIn(a.tm);
    a.clock.advance(900_000);
    failingFor = "a";
    expect(await a.tm.getAccessToken()).toBe("at_2"); // rt_2 is only in a's memory
    failingFor = undefined;
    // Another manager (another process) signs in again and stores the newer session.
    const b = setup({ storage: failingStorage("b"), lock, refreshIntents }, server);
    b.clock.advance(900_001);
    await signIn(b.tm);
    const newer = await stored(base);
    expect(newer?.refresh_token).not.toBe("rt_2");
    // a's next call after the retry pause finds the newer record and uses it instead of writing rt_2 back.
    a.clock.advance(RETRY_PAUSE_MS);
    expect(await a.tm.getAccessToken()).toBe(newer?.access_token);
    expect(await stored(base)).toEqual(newer);
  });

  it("drops its unsaved record once storage shows that very record (a write that went through after all)", async () => {
    const base = memoryStorage();
    let writes = 0;
    let failOnce = false;
    const storage: TokenStorage = {
      ...base,
      set: async (key, value) => {
        writes++;
        await base.set(key, value);
        // Like Redis's REPLICATION_TIMEOUT: the value is stored, yet the write reports a failure.
        if (failOnce) {
          failOnce = false;
          throw new Error("replicas did not acknowledge");
        }
      },
    };
    const h = await signedIn({ storage });
    h.clock.advance(900_000);
    failOnce = true;
    expect(await h.tm.getAccessToken()).toBe("at_2");
    const before = writes;
    // past the pause, so that each call reads storage and decides again
    h.clock.advance(RETRY_PAUSE_MS);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    h.clock.advance(RETRY_PAUSE_MS);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(writes - before).toBe(0);
  });

  it("never writes its unsaved tokens back over a later refresh of them, even from a process whose clock is behind (regression: clocks were compared)", async () => {
    const base = memoryStorage();
    const server = tokenServer();
    let landsButFails = false;
    const aStorage: TokenStorage = {
      ...base,
      set: async (key, value) => {
        await base.set(key, value);
        if (landsButFails && isTokens(key)) throw new Error("replicas did not acknowledge");
      },
    };
    const lock = processLock();
    const a = setup({ storage: aStorage, lock, refreshIntents }, server);
    await signIn(a.tm);
    a.clock.advance(900_000);
    landsButFails = true;
    expect(await a.tm.getAccessToken()).toBe("at_2"); // stored, yet reported failed: unsaved in a
    landsButFails = false;
    // b's clock is 10 s behind a's: a's record looks written in b's future, and b refreshes from it
    // (an API refused its access token).
    const b = setup({ storage: base, lock, refreshIntents }, server);
    b.clock.advance(890_000);
    expect(await b.tm.getAccessToken()).toBe("at_2");
    b.tm.onUnauthorized("at_2");
    expect(await b.tm.getAccessToken()).toBe("at_3");
    expect(await stored(base)).toMatchObject({ refresh_token: "rt_3" });
    // a retries its write: storage holds a later record of the same session, so a takes it.
    a.clock.advance(RETRY_PAUSE_MS);
    expect(await a.tm.getAccessToken()).toBe("at_3");
    expect(await stored(base)).toMatchObject({ access_token: "at_3", refresh_token: "rt_3" });
  });

  it("on invalid_grant with a storage it cannot read again, neither ends the session nor deletes the stored tokens (another process may have stored newer ones)", async () => {
    const base = memoryStorage();
    let reads = 0;
    let stale: string | undefined;
    const storage: TokenStorage = {
      ...base,
      // The first read sees an old record (as a lagging replica would); the next one fails.
      get: async (key) => {
        reads++;
        if (stale === undefined) return base.get(key);
        if (reads === 1) return stale;
        throw new Error("ECONNRESET");
      },
    };
    const h = await signedIn({ storage });
    stale = (await base.get(TOKENS_KEY)) ?? undefined;
    await base.set(TOKENS_KEY, JSON.stringify({ ...JSON.parse(stale!), refresh_token: "rt_newer", id: "newer" }));
    const ended: unknown[] = [];
    h.tm.on("session-ended", (e) => ended.push(e));
    h.server.queue.push(() => json(400, { error: "invalid_grant" }));
    h.clock.advance(900_000);
    reads = 0;
    const error = await h.tm.getAccessToken().catch((e: unknown) => e);
    expect(error).toEqual(failure("STORAGE_FAILED"));
    expect(ended).toEqual([]);
    expect(await stored(base)).toMatchObject({ refresh_token: "rt_newer" });
  });

  it("writes its unsaved tokens once the storage answers again, unasked, even when a retry joined a call the outage held up (the others wait for this write)", async () => {
    const base = memoryStorage();
    let down = false;
    let downOnceIntentWritten = false;
    const back = deferred();
    const storage: TokenStorage = {
      ...base,
      set: async (key, value) => {
        if (down) throw new Error("connection refused");
        await base.set(key, value);
        // The outage begins while the refresh is in flight (before its intent, nothing is sent: D6),
        // once: the holder's later rewrites of its intent (its beats, D7) do not start it again.
        if (downOnceIntentWritten && key.endsWith(":intent")) {
          downOnceIntentWritten = false;
          down = true;
        }
      },
    };
    // A lock whose release waits for the storage to answer (a client's offline queue, a hung server).
    const lock: Lock = async (_name, task) => {
      const result = await task({ isHeld: async () => true });
      if (down) await back.promise;
      return result;
    };
    const h = await signedIn({ storage, lock, refreshIntents });
    const failed = new Promise((resolve) => h.tm.on("storage-failed", resolve));
    h.clock.advance(900_000);
    downOnceIntentWritten = true;
    const held = h.tm.getAccessToken();
    await failed;
    h.clock.advance(RETRY_PAUSE_MS);
    // The first retry comes while the call still waits for its lock release: it joins that call.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    down = false;
    back.resolve();
    expect(await held).toBe("at_2");
    // No call comes; the next retry writes the tokens.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await stored(base)).toMatchObject({ access_token: "at_2", refresh_token: "rt_2" });
    expect(h.calls).toHaveLength(1);
  });

  it("surfaces a failing read as STORAGE_FAILED", async () => {
    const storage: TokenStorage = { ...memoryStorage(), get: async () => Promise.reject(new Error("locked")) };
    const h = setup({ storage });
    await expect(h.tm.getAccessToken()).rejects.toThrow(failure("STORAGE_FAILED"));
  });
});

describe("refresh failures", () => {
  it("ends the session on invalid_grant: clears the tokens, fires session-ended once and throws SessionEndedError", async () => {
    const h = await signedIn();
    const ended: unknown[] = [];
    h.tm.on("session-ended", (e) => ended.push(e.error));
    h.server.queue.push(() => json(400, { error: "invalid_grant", error_description: "Refresh token expired" }));
    h.clock.advance(900_000);
    const results = await Promise.allSettled([h.tm.getAccessToken(), h.tm.getAccessToken()]);
    const reasons = results.map((r) => (r as PromiseRejectedResult).reason as unknown);
    expect(reasons[0]).toBeInstanceOf(SessionEndedError);
    expect(reasons[0]).toMatchObject({
      code: "SESSION_ENDED",
      error: "invalid_grant",
      errorDescription: "Refresh token expired",
      status: 400,
    });
    expect(reasons[1]).toBe(reasons[0]);
    expect(ended).toEqual([reasons[0]]);
    expect(await h.storage.get(TOKENS_KEY)).toBeUndefined();
    expect(h.calls).toHaveLength(1);
    await expect(h.tm.getAccessToken()).rejects.toThrow(failure("NOT_SIGNED_IN"));
    expect(h.calls).toHaveLength(1);
  });

  it("retries a 503 and a 429 (refused unprocessed: the refresh token is still current) with bounded backoff and succeeds", async () => {
    const h = await signedIn();
    h.server.queue.push(
      () => new Response("busy", { status: 503 }),
      () => new Response("slow down", { status: 429 }),
    );
    h.clock.advance(900_000);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(h.calls).toHaveLength(3);
  });

  it("waits a 429's Retry-After before sending the refresh again, not its own backoff (as the Python manager does)", async () => {
    const h = await signedIn();
    h.server.queue.push(() => new Response("slow down", { status: 429, headers: { "Retry-After": "1" } }));
    h.clock.advance(900_000);
    const started = performance.now();
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(h.calls).toHaveLength(2);
    // The backoff's first wait is far shorter than the second Retry-After asked for.
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  it("does not retry a 429 whose Retry-After is over 10 s: it rejects at once with TRANSIENT saying when to try again, tokens kept", async () => {
    const h = await signedIn();
    h.server.queue.push(() => new Response("slow down", { status: 429, headers: { "Retry-After": "30" } }));
    h.clock.advance(900_000);
    const error = await h.tm.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(error).toMatchObject({ code: "TRANSIENT", status: 429, retryAfterMs: 30_000 });
    expect((error as Error).message).toContain("retry after 30 s");
    expect(h.calls).toHaveLength(1);
    expect(await h.storage.get(TOKENS_KEY)).toBeDefined();
  });

  it("retries a refresh whose connection could not be made (ECONNREFUSED, ENOTFOUND): it never left this machine", async () => {
    const h = await signedIn();
    const refused = (code: string) => () =>
      Promise.reject(new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) }));
    h.server.queue.push(refused("ECONNREFUSED"), refused("ENOTFOUND"));
    h.clock.advance(900_000);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(h.calls).toHaveLength(3);
  });

  it.each([
    ["a 500", () => new Response("oops", { status: 500 })],
    ["a 502", () => new Response("<html>502</html>", { status: 502 })],
    ["a 504", () => new Response("", { status: 504 })],
    ["a timeout", () => Promise.reject(new DOMException("The operation timed out.", "TimeoutError"))],
    [
      "a connection reset",
      () =>
        Promise.reject(
          new TypeError("fetch failed", { cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }) }),
        ),
    ],
    ["a network error of unknown cause", () => Promise.reject(new TypeError("fetch failed"))],
  ])(
    "does not retry a refresh after %s (the request may have reached the tenant and rotated the token), keeps the tokens and throws TransientError",
    async (_, answer) => {
      const h = await signedIn();
      h.server.queue.push(answer);
      h.clock.advance(900_000);
      const error = await h.tm.getAccessToken().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransientError);
      expect(error).not.toBeInstanceOf(SessionEndedError);
      expect(error).toMatchObject({ code: "TRANSIENT", attempts: 1 });
      expect(h.calls).toHaveLength(1);
      expect(await stored(h.storage)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
      // The next call presents the same token again: the session goes on if the lost request never
      // reached the tenant (here it did not rotate), and ends if it did.
      expect(await h.tm.getAccessToken()).toBe("at_2");
    },
  );

  it("keeps the tokens and throws TransientError after the bounded retries of a 503", async () => {
    const h = await signedIn();
    const down = () => new Response("busy", { status: 503 });
    h.server.queue.push(down, down, down, down);
    h.clock.advance(900_000);
    const error = await h.tm.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(error).toMatchObject({ code: "TRANSIENT", status: 503, attempts: 3 });
    expect(h.calls).toHaveLength(3);
    expect(await stored(h.storage)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
    h.server.queue.length = 0;
    expect(await h.tm.getAccessToken()).toBe("at_2");
  });

  it("makes exactly `attempts` requests", async () => {
    const h = await signedIn({ retry: { attempts: 1, baseDelayMs: 0 } });
    h.server.queue.push(() => new Response("", { status: 503 }));
    h.clock.advance(900_000);
    await expect(h.tm.getAccessToken()).rejects.toMatchObject({ attempts: 1 });
    expect(h.calls).toHaveLength(1);
  });

  it("keeps the tokens on another OAuth error and throws OAuthResponseError", async () => {
    const h = await signedIn();
    h.server.queue.push(() => json(401, { error: "invalid_client" }));
    h.clock.advance(900_000);
    const error = await h.tm.getAccessToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthResponseError);
    expect(error).not.toBeInstanceOf(SessionEndedError);
    expect(error).toMatchObject({ code: "OAUTH_ERROR", error: "invalid_client", status: 401 });
    expect(await stored(h.storage)).toMatchObject({ refresh_token: "rt_1" });
  });

  it.each([
    ["an HTML page", () => new Response("<!doctype html><p>maintenance</p>", { status: 200 })],
    ["a missing access_token", () => json(200, { token_type: "Bearer", expires_in: 900 })],
    ["a string expires_in", () => json(200, { access_token: "a", token_type: "Bearer", expires_in: "900" })],
    [
      "a redirect to another origin",
      () => new Response(null, { status: 307, headers: { Location: "https://evil.test/token" } }),
    ],
  ])("rejects a refresh answered with %s, storing nothing", async (_name, answer) => {
    const h = await signedIn();
    h.server.queue.push(answer);
    h.clock.advance(900_000);
    await expect(h.tm.getAccessToken()).rejects.toThrow(failure("INVALID_RESPONSE"));
    expect(await stored(h.storage)).toMatchObject({ access_token: "at_1", refresh_token: "rt_1" });
  });
});

describe("onUnauthorized", () => {
  it("marks the current token unusable, so that concurrent 401s cause one refresh", async () => {
    const h = await signedIn();
    const token = await h.tm.getAccessToken();
    for (let i = 0; i < 10; i++) h.tm.onUnauthorized(token);
    const next = await Promise.all(Array.from({ length: 10 }, () => h.tm.getAccessToken()));
    expect(new Set(next)).toEqual(new Set(["at_2"]));
    expect(h.calls).toHaveLength(1);
    // A late 401 for the old token does not throw away the new one.
    h.tm.onUnauthorized(token);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(h.calls).toHaveLength(1);
  });

  it("ignores a token that is not the current one", async () => {
    const h = await signedIn();
    h.tm.onUnauthorized("at_other");
    expect(await h.tm.getAccessToken()).toBe("at_1");
    expect(h.calls).toHaveLength(0);
  });
});

describe("several tabs or managers sharing one storage", () => {
  it("make one refresh through a shared lock, the others re-reading storage after taking it", async () => {
    const storage = memoryStorage();
    const lock = processLock();
    const server = tokenServer();
    const first = setup({ storage, lock, refreshIntents }, server);
    await signIn(first.tm);
    const tabs = [first, ...Array.from({ length: 4 }, () => setup({ storage, lock, refreshIntents }, server))];
    for (const tab of tabs) {
      expect(await tab.tm.getAccessToken()).toBe("at_1");
      tab.clock.advance(900_000);
    }
    const results = await Promise.all(tabs.flatMap((tab) => Array.from({ length: 20 }, () => tab.tm.getAccessToken())));
    expect(new Set(results)).toEqual(new Set(["at_2"]));
    expect(server.refreshes).toBe(1);
  });

  it("make one refresh through the lock the storage carries, when no lock option is given", async () => {
    const names: string[] = [];
    const shared = processLock();
    const storage: TokenStorage = {
      ...memoryStorage(),
      lock: (name, task) => (names.push(name), shared(name, task)),
      refreshIntents,
    };
    const server = tokenServer();
    const managers = Array.from({ length: 3 }, () => setup({ storage }, server));
    await signIn(managers[0]!.tm);
    for (const m of managers) m.clock.advance(900_000);
    const results = await Promise.all(managers.map((m) => m.tm.getAccessToken()));
    expect(new Set(results)).toEqual(new Set(["at_2"]));
    expect(server.refreshes).toBe(1);
    expect(names).toEqual(Array(3).fill(`tenant-integration:${BASE}:${CLIENT_ID}:lock`));
  });

  it("prefer the lock option over the storage's own lock", async () => {
    const used: string[] = [];
    const storage: TokenStorage = {
      ...memoryStorage(),
      lock: (_n, task) => (used.push("storage"), task()),
      refreshIntents,
    };
    const h = setup({ storage, lock: (_n, task) => (used.push("option"), task()) });
    await signIn(h.tm);
    h.clock.advance(900_000);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(used).toEqual(["option"]);
  });

  it("make one refresh through Web Locks", async () => {
    // A LockManager that queues requests per name, like navigator.locks.
    const tails = new Map<string, Promise<unknown>>();
    const locks: LockManagerLike = {
      request(name, _options, task) {
        const run = (tails.get(name) ?? Promise.resolve()).then(task, task);
        tails.set(
          name,
          run.catch(() => undefined),
        );
        return run;
      },
    };
    const storage = memoryStorage();
    const server = tokenServer();
    const tabs = Array.from({ length: 3 }, () => setup({ storage, lock: webLock(locks), refreshIntents }, server));
    await signIn(tabs[0]!.tm);
    for (const tab of tabs) tab.clock.advance(900_000);
    const results = await Promise.all(tabs.flatMap((tab) => [tab.tm.getAccessToken(), tab.tm.getAccessToken()]));
    expect(new Set(results)).toEqual(new Set(["at_2"]));
    expect(server.refreshes).toBe(1);
  });

  it("uses the refresh token another process rotated meanwhile instead of ending the session", async () => {
    // Two processes without a shared lock: both refresh with rt_1; the server rotates once. Each has
    // a lock of its own, so each writes a refresh intent; intentWaitMs 0 makes the second present rt_1
    // even when it reads the first one's intent. Which request arrives first is up to the timing (the
    // fingerprint is hashed off the main thread): the first is answered once the second has arrived,
    // the second once the first one's manager has stored its tokens.
    const storage = memoryStorage();
    let valid = "rt_1";
    let n = 1;
    const secondArrived = deferred();
    const done = { a: deferred(), b: deferred() };
    let first: "a" | "b" | undefined;
    const handlerOf =
      (who: "a" | "b"): Handler =>
      async (call) => {
        const body = bodyOf(call);
        if (body["grant_type"] === "authorization_code") return tokens("at_1", "rt_1");
        if (!first) {
          first = who;
          await secondArrived.promise;
        } else {
          secondArrived.resolve();
          await done[first].promise;
        }
        if (body["refresh_token"] !== valid) return json(400, { error: "invalid_grant" });
        n++;
        valid = `rt_${n}`;
        return tokens(`at_${n}`, valid);
      };
    const a = setup(
      { storage, lock: processLock(), refreshIntents, intentWaitMs: 0 },
      { refreshes: 0, queue: [], handler: handlerOf("a") },
    );
    await signIn(a.tm);
    const b = setup(
      { storage, lock: processLock(), refreshIntents, intentWaitMs: 0 },
      { refreshes: 0, queue: [], handler: handlerOf("b") },
    );
    a.clock.advance(900_000);
    b.clock.advance(900_000);
    const pa = a.tm.getAccessToken().finally(() => done.a.resolve());
    const pb = b.tm.getAccessToken().finally(() => done.b.resolve());
    expect(await pa).toBe("at_2");
    expect(await pb).toBe("at_2");
    expect(await stored(storage)).toMatchObject({ refresh_token: "rt_2" });
  });
});

describe("sign-out during a refresh", () => {
  it("discards the refresh result instead of resurrecting the session", async () => {
    const h = await signedIn();
    const gate = deferred();
    h.server.queue.push(async () => {
      await gate.promise;
      return tokens("at_late", "rt_late");
    });
    h.clock.advance(900_000);
    const pending = h.tm.getAccessToken();
    await new Promise((r) => setTimeout(r, 0));
    await h.tm.signOut();
    gate.resolve();
    await expect(pending).rejects.toThrow(failure("NOT_SIGNED_IN"));
    expect(await h.storage.get(TOKENS_KEY)).toBeUndefined();
  });
});
