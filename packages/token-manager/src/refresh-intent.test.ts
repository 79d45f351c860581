// When a process may give up on another process's refresh intent (spec/token-store/README.md,
// "Paused processes", step 2; decision D1): only once it has itself watched that intent for
// intentWaitMs without a break, or its holder is known to have exited. An outage of the storage, or
// a pause of this process, ends a watch; the intent's `since` is never used. Each test plays the
// holder by hand: its intent in the storage, and, where it lives, its tokens written later.
import { createHash } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { processLock } from "./lock.js";
import { memoryStorage } from "./storage/memory.js";
import type { TokenStorage } from "./storage/storage.js";
import { failure } from "./test-support/failure.js";
import { BASE, CLIENT_ID, bodyOf, type Setup, setup, signIn, tokenServer, tokens } from "./test-support/harness.js";
import { refreshIntents } from "./refresh-intent.js";
import { createSessionManager, createSessions } from "./sessions.js";
import { createTokenManager } from "./token-manager.js";
import type { TokenManagerOptions } from "./types.js";

const PREFIX = `tenant-integration:${BASE}:${CLIENT_ID}:`;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A storage of memory whose reads fail while `down` is set (an outage), with the manager's lock. */
function outageStorage(): TokenStorage & { down: boolean } {
  const inner = memoryStorage();
  const storage = {
    down: false,
    lock: processLock(),
    get: (key: string) => (storage.down ? Promise.reject(new Error("connection refused")) : inner.get(key)),
    set: (key: string, value: string) =>
      storage.down ? Promise.reject(new Error("connection refused")) : inner.set(key, value),
    delete: (key: string) => (storage.down ? Promise.reject(new Error("connection refused")) : inner.delete(key)),
  };
  return storage;
}

/** When each refresh request left, on the monotonic clock. */
function refreshTimes(h: Setup): number[] {
  return h.calls.filter((call) => bodyOf(call)["grant_type"] === "refresh_token").map((call) => call.at);
}

/**
 * A manager signed in (at_1, rt_1), its access token expired, and another process's intent on rt_1
 * in the storage: a holder on another host (never known to have exited), whose intent is `ageMs` old.
 */
async function waiterOn(storage: TokenStorage, intentWaitMs: number, ageMs = 0) {
  const h = setup({ storage, lock: processLock(), refreshIntents, intentWaitMs });
  await signIn(h.tm);
  h.calls.length = 0;
  h.clock.advance(900_000);
  const intent = {
    fingerprint: sha256("rt_1"),
    holder: "the-holder",
    since: h.clock.now() - ageMs,
    pid: 4242,
    host: "elsewhere",
  };
  await storage.set(`${PREFIX}intent`, JSON.stringify(intent));
  return h;
}

/** The holder writes its tokens (at_2, rt_2) and deletes its intent, as a live holder does. */
async function holderWrites(h: Setup, storage: TokenStorage): Promise<void> {
  const old = JSON.parse((await storage.get(`${PREFIX}tokens`)) as string) as Record<string, unknown>;
  const record = {
    ...old,
    access_token: "at_holder",
    refresh_token: "rt_holder",
    received_at: h.clock.now(),
    id: "written-by-the-holder",
    seq: Number(old["seq"]) + 1,
  };
  await storage.set(`${PREFIX}tokens`, JSON.stringify(record));
  await storage.delete(`${PREFIX}intent`);
}

describe("a live holder's refresh intent (D1)", () => {
  it("is waited for however old it is: its since is not used, and the holder's tokens are used", async () => {
    // Written an hour ago (a Redis outage of an hour, say) by a holder that lives and writes now.
    const storage = outageStorage();
    const h = await waiterOn(storage, 2_000, 3_600_000);
    const token = h.tm.getAccessToken();
    await sleep(300);
    await holderWrites(h, storage);
    expect(await token).toBe("at_holder");
    expect(refreshTimes(h)).toEqual([]);
  });

  it("is given up after this process watched it for intentWaitMs without a break (the documented trade-off)", async () => {
    const storage = outageStorage();
    const h = await waiterOn(storage, 400);
    const started = performance.now();
    expect(await h.tm.getAccessToken()).toBe("at_2");
    const [sent] = refreshTimes(h);
    expect(sent).toBeGreaterThanOrEqual(started + 400);
  });

  it("is waited for anew after a read of the storage failed: an outage never counts as watching", async () => {
    const storage = outageStorage();
    const h = await waiterOn(storage, 600);
    const first = h.tm.getAccessToken();
    await sleep(300);
    storage.down = true;
    await expect(first).rejects.toThrow(failure("STORAGE_FAILED"));
    storage.down = false;
    const again = performance.now();
    expect(await h.tm.getAccessToken()).toBe("at_2");
    // From the first read after the outage, a whole intentWaitMs: not what was left of the first watch.
    const [sent] = refreshTimes(h);
    expect(sent).toBeGreaterThanOrEqual(again + 600);
  });

  it("is waited for anew after this process was paused: reads more than a second apart are two watches", async () => {
    const storage = outageStorage();
    const h = await waiterOn(storage, 1_500);
    const token = h.tm.getAccessToken();
    await sleep(300);
    // Frozen (as SIGSTOP would): no poll for 1.2 s.
    const frozen = performance.now() + 1_200;
    while (performance.now() < frozen);
    const resumed = performance.now();
    expect(await token).toBe("at_2");
    const [sent] = refreshTimes(h);
    expect(sent).toBeGreaterThanOrEqual(resumed + 1_500);
  });

  it("is given up at once when its holder is a process of this host that has exited", async () => {
    const storage = Object.assign(outageStorage(), {
      processIdentity: { host: "here", pid: 1, gone: (host: string, pid: number) => host === "here" && pid === 4242 },
    });
    const h = await waiterOn(storage, 60_000);
    await storage.set(
      `${PREFIX}intent`,
      JSON.stringify({
        fingerprint: sha256("rt_1"),
        holder: "the-holder",
        since: h.clock.now(),
        pid: 4242,
        host: "here",
      }),
    );
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(refreshTimes(h)).toHaveLength(1);
  });
});

/**
 * A storage of memory, with the manager's lock, whose writes of the keys named in `failing` fail
 * (a storage fault for those keys alone: an ACL, a full disk for one entry).
 */
function faultyWrites(failing: Set<string>): TokenStorage {
  const inner = memoryStorage();
  return {
    lock: processLock(),
    get: (key) => inner.get(key),
    set: (key, value) =>
      [...failing].some((kind) => key.endsWith(`:${kind}`))
        ? Promise.reject(new Error(`ENOSPC: no space left on device, write (${kind(key)})`))
        : inner.set(key, value),
    delete: (key) => inner.delete(key),
  };
}
const kind = (key: string) => key.slice(key.lastIndexOf(":") + 1);

describe("no intent, no send (D6)", () => {
  it("a refresh whose intent cannot be written fails with STORAGE_FAILED saying so and why, sends nothing, keeps the stored tokens, and the next call tries again", async () => {
    const failing = new Set(["intent"]);
    const storage = faultyWrites(failing);
    const h = setup({ storage, lock: processLock(), refreshIntents });
    await signIn(h.tm);
    h.clock.advance(900_000);
    const error = (await h.tm.getAccessToken().catch((e: unknown) => e)) as Error & { code: string };
    expect(error).toEqual(failure("STORAGE_FAILED"));
    expect(error.message).toBe(
      "STORAGE_FAILED: the refresh intent could not be written (ENOSPC: no space left on device, write (intent)), so the refresh was not sent; the stored tokens are unchanged and the next call tries again",
    );
    expect((error.cause as Error).message).toBe("ENOSPC: no space left on device, write (intent)");
    expect(refreshTimes(h)).toEqual([]);
    expect(JSON.parse((await storage.get(`${PREFIX}tokens`)) as string)).toMatchObject({ refresh_token: "rt_1" });
    failing.clear();
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(refreshTimes(h)).toHaveLength(1);
  });

  it("the intent and then the tokens unwritable: another process, finding no intent, never presents a refresh token the tenant already rotated", async () => {
    const failing = new Set<string>();
    const storage = faultyWrites(failing);
    const server = tokenServer();
    const first = setup({ storage, lock: processLock(), refreshIntents }, server);
    await signIn(first.tm);
    failing.add("intent").add("tokens");
    first.clock.advance(900_000);
    await expect(first.tm.getAccessToken()).rejects.toThrow(failure("STORAGE_FAILED"));
    // The first process gives up (or dies); the storage answers again; another process calls.
    failing.clear();
    const second = setup({ storage, lock: processLock(), refreshIntents }, server);
    second.clock.advance(900_000);
    expect(await second.tm.getAccessToken()).toBe("at_2");
    const presented = [...first.calls, ...second.calls]
      .map((call) => bodyOf(call))
      .filter((body) => body["grant_type"] === "refresh_token")
      .map((body) => body["refresh_token"]);
    expect(presented).toEqual(["rt_1"]);
  });
});

/**
 * A manager with intents (intentWaitMs 400, so a beat every 100 ms) whose refresh the tenant holds
 * until `answer` is called; 50 ms after the call, so that its intent is stored.
 */
async function slowRefresh(storage = Object.assign(memoryStorage(), { lock: processLock() })) {
  const server = tokenServer();
  let answer: (response: Response) => void = () => {};
  const h = setup({ storage, lock: processLock(), refreshIntents, intentWaitMs: 400 }, server);
  await signIn(h.tm);
  h.clock.advance(900_000);
  server.queue.push(() => new Promise<Response>((resolve) => (answer = resolve)));
  const token = h.tm.getAccessToken();
  await sleep(50);
  return { storage, token, tm: h.tm, answer: (response: Response) => answer(response) };
}

/**
 * A storage of memory whose next read of the intent once `hang` is set hangs until `unhang` (the next
 * beat's: nothing else reads the intent while the refresh is at the tenant), and that counts the
 * intent's writes.
 */
function hangingIntentStorage() {
  const inner = Object.assign(memoryStorage(), { lock: processLock() });
  const control = { hang: false, hung: 0, writes: 0, unhang: () => {} };
  const stalled = new Promise<void>((resolve) => (control.unhang = resolve));
  const storage = {
    ...inner,
    async get(key: string) {
      if (control.hang && key.endsWith(":intent")) {
        control.hang = false;
        control.hung++;
        const value = await inner.get(key);
        await stalled;
        return value;
      }
      return inner.get(key);
    },
    async set(key: string, value: string) {
      if (key.endsWith(":intent")) control.writes++;
      return inner.set(key, value);
    },
  };
  return { storage, control };
}

const within = <T>(ms: number, promise: Promise<T>) =>
  Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`not settled within ${ms} ms`)))]);

describe("a holder that lives says so: intent beats (D7)", () => {
  it("a waiter keeps waiting past intentWaitMs while the holder rewrites its intent's since, and uses the holder's tokens", async () => {
    // The tenant answers the holder slowly: the holder runs and beats for three times the wait.
    const storage = outageStorage();
    const h = await waiterOn(storage, 400);
    const token = h.tm.getAccessToken();
    const stored = JSON.parse((await storage.get(`${PREFIX}intent`)) as string) as { since: number };
    for (let beat = 1; beat <= 12; beat++) {
      await sleep(100);
      await storage.set(`${PREFIX}intent`, JSON.stringify({ ...stored, since: stored.since + beat }));
    }
    await holderWrites(h, storage);
    expect(await token).toBe("at_holder");
    expect(refreshTimes(h)).toEqual([]);
  });

  it("the holder rewrites its own intent with a later since while its refresh is at the tenant, and not once it is dropped", async () => {
    const { storage, token, answer } = await slowRefresh();
    // Waited for, not slept on: a loaded machine may run a beat (every 100 ms here) much later.
    const stored = async () => {
      const raw = await storage.get(`${PREFIX}intent`);
      return raw == null ? undefined : (JSON.parse(raw) as { since: number; holder: string });
    };
    const first = await vi.waitUntil(stored, { timeout: 2_000 });
    await expect.poll(async () => (await stored())?.since, { timeout: 2_000 }).toBeGreaterThan(first.since);
    expect((await stored())?.holder).toBe(first.holder);
    answer(tokens("at_slow", "rt_slow"));
    expect(await token).toBe("at_slow");
    await expect.poll(stored, { timeout: 2_000 }).toBeUndefined();
    await sleep(300); // three beat intervals: none writes it again
    expect(await stored()).toBeUndefined();
  });

  it("the end of a refresh never waits for a beat whose storage read hangs, and that beat writes nothing", async () => {
    const { storage, control } = hangingIntentStorage();
    const { token, answer } = await slowRefresh(storage);
    control.hang = true;
    await sleep(250);
    expect(control.hung).toBeGreaterThan(0);
    answer(tokens("at_slow", "rt_slow"));
    try {
      expect(await within(2_000, token)).toBe("at_slow");
      const writes = control.writes;
      control.unhang();
      await sleep(300);
      expect(await storage.get(`${PREFIX}intent`)).toBeUndefined();
      expect(control.writes).toBe(writes);
    } finally {
      control.unhang();
    }
  });

  it.each(["close", "signOut"] as const)(
    "a manager %s-d stops beating and leaves its intent to the waiters' watch",
    async (end) => {
      const { storage, control } = hangingIntentStorage();
      const { token, tm, answer } = await slowRefresh(storage);
      await sleep(250);
      expect(control.writes).toBeGreaterThan(1);
      if (end === "close") tm.close();
      else await tm.signOut();
      const writes = control.writes;
      const left = await storage.get(`${PREFIX}intent`);
      await sleep(350);
      expect(control.writes).toBe(writes);
      expect(left).toBeDefined();
      expect(await storage.get(`${PREFIX}intent`)).toBe(left);
      answer(tokens("at_slow", "rt_slow"));
      await token.catch(() => undefined);
    },
  );

  it("a beat never overwrites another holder's intent", async () => {
    const { storage, token, answer } = await slowRefresh();
    const other = JSON.stringify({
      fingerprint: sha256("rt_1"),
      holder: "another-holder",
      since: 1,
      pid: 7,
      host: "elsewhere",
    });
    await storage.set(`${PREFIX}intent`, other);
    await sleep(350);
    expect(await storage.get(`${PREFIX}intent`)).toBe(other);
    answer(tokens("at_slow", "rt_slow"));
    expect(await token).toBe("at_slow");
    expect(await storage.get(`${PREFIX}intent`)).toBe(other);
  });
});

describe("a lock that processes share brings the refresh intents (imported by the storages that have one)", () => {
  const options = {
    baseUrl: BASE,
    clientId: CLIENT_ID,
    redirectUri: "https://app.test/cb",
    scopes: ["profile:read"],
  } as const;
  const refusal =
    'INVALID_OPTIONS: lock: a lock of your own needs refreshIntents (from "@tenant-integration/token-manager") beside it, on the storage or as an option';
  /** How many refresh intents one refresh writes, the storage of memory given `carried` (a lock, the intents), the manager `more`. */
  async function intentsWritten(
    carried: Partial<TokenStorage>,
    more: Partial<TokenManagerOptions> = {},
  ): Promise<number> {
    const written: string[] = [];
    const inner = memoryStorage();
    const set = (key: string, value: string) => (key.endsWith(":intent") && written.push(value), inner.set(key, value));
    const h = setup({ ...more, storage: { ...inner, set, ...carried } });
    await signIn(h.tm);
    h.clock.advance(900_000);
    expect(await h.tm.getAccessToken()).toBe("at_2");
    return written.length;
  }

  it("refuses a lock option without them, at creation, saying how to give them (createTokenManager, createSessionManager, createSessions)", () => {
    const lock = processLock();
    expect(() => createTokenManager({ ...options, lock })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: refusal }),
    );
    expect(() => createSessionManager({ ...options, lock, sessionId: "42" })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: refusal }),
    );
    expect(() => createSessions({ ...options, lock })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: refusal }),
    );
  });

  it("refuses a storage of your own that carries a lock without them", () => {
    const storage: TokenStorage = { ...memoryStorage(), lock: processLock() };
    expect(() => createTokenManager({ ...options, storage })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: refusal }),
    );
    expect(() => createSessions({ ...options, storage })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", message: refusal }),
    );
  });

  it("writes an intent before each refresh with them on the storage beside its lock, or as the option beside the lock option", async () => {
    expect(await intentsWritten({ lock: processLock(), refreshIntents })).toBe(1);
    expect(await intentsWritten({}, { lock: processLock(), refreshIntents })).toBe(1);
  });

  it("writes none without a lock that processes share (one process, or tabs on Web Locks): given alone, they are unused", async () => {
    expect(await intentsWritten({})).toBe(0);
    expect(await intentsWritten({ refreshIntents })).toBe(0);
    expect(await intentsWritten({}, { refreshIntents })).toBe(0);
  });
});
