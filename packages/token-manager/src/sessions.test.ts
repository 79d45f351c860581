/**
 * `createSessions`: a server acting for many users. Every call names its session; sign-ins are found
 * by state and bound to the browser that began them; managers are cached, and dropped when idle or
 * past `maxCached`, never while a call or refresh is under way or their tokens are unwritten.
 */
import { describe, expect, it } from "vitest";
import { bindingHash } from "./binding.js";
import { createSessions, type SessionsOptions } from "./sessions.js";
import { memoryStorage } from "./storage/memory.js";
import type { TokenStorage } from "./storage/storage.js";
import { failure } from "./test-support/failure.js";
import {
  BASE,
  CLIENT_ID,
  REDIRECT_URI,
  bodyOf,
  clock,
  deferred,
  pendingName,
  recordingFetch,
  tokens,
} from "./test-support/harness.js";

/** A tenant whose tokens name the code they came from (`at_<code>_<n>`), so a session shows whose they are. */
function tenant() {
  let n = 0;
  const hold: { next?: Promise<void> | undefined } = {};
  const { fetch, calls } = recordingFetch(async (call) => {
    if (call.url.endsWith("/oauth/revoke")) return new Response(null, { status: 200 });
    const body = bodyOf(call);
    if (hold.next) await hold.next;
    const who = body["grant_type"] === "refresh_token" ? String(body["refresh_token"]).split("_")[1] : body["code"];
    n++;
    return tokens(`at_${String(who)}_${n}`, `rt_${String(who)}_${n}`);
  });
  return { fetch, calls, hold };
}

function sessionsOn(overrides: Partial<SessionsOptions> = {}) {
  const t = tenant();
  const c = clock();
  const storage = overrides.storage ?? memoryStorage();
  const sessions = createSessions({
    baseUrl: BASE,
    clientId: CLIENT_ID,
    redirectUri: REDIRECT_URI,
    scopes: ["profile:read"],
    storage,
    fetch: t.fetch,
    now: c.now,
    retry: { attempts: 1, baseDelayMs: 0 },
    ...overrides,
  });
  return { sessions, storage, clock: c, ...t };
}

/** The callback URL of a begun sign-in, with `code`. */
const callbackOf = (url: string, code: string) =>
  `${REDIRECT_URI}?code=${code}&state=${new URL(url).searchParams.get("state") ?? ""}`;

/** Signs `session` in with a code naming it. */
async function signInAs(sessions: ReturnType<typeof sessionsOn>["sessions"], session: string) {
  const { url, browser } = await sessions.beginSignIn({ session });
  return sessions.completeSignIn(callbackOf(url, session), { browser });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("createSessions", () => {
  it("hands out one cached manager per session id, and refuses an invalid id before anything is read", () => {
    let reads = 0;
    const storage: TokenStorage = { ...memoryStorage(), get: async () => void reads++ };
    const { sessions } = sessionsOn({ storage });
    expect(sessions.manager("ada")).toBe(sessions.manager("ada"));
    expect(sessions.manager("ada")).not.toBe(sessions.manager("bob"));
    expect(() => sessions.manager("a:b")).toThrow(failure("INVALID_SESSION_ID"));
    expect(() => sessions.manager("")).toThrow(failure("INVALID_SESSION_ID"));
    expect(sessions.cached).toBe(2);
    expect(reads).toBe(0);
  });

  it("refuses a sessionId option and bounds that are not positive", () => {
    const base = { baseUrl: BASE, clientId: CLIENT_ID, redirectUri: REDIRECT_URI, scopes: ["profile:read"] as const };
    expect(() => createSessions({ ...base, sessionId: "x" } as SessionsOptions)).toThrow(failure("INVALID_OPTIONS"));
    expect(() => createSessions({ ...base, maxCached: 0 })).toThrow(failure("INVALID_OPTIONS"));
    expect(() => createSessions({ ...base, maxIdleMs: 0 })).toThrow(failure("INVALID_OPTIONS"));
  });

  it("signs two users in at once, completing in reverse order, each session holding only its own tokens", async () => {
    const { sessions } = sessionsOn();
    const ada = await sessions.beginSignIn({ session: "ada" });
    const bob = await sessions.beginSignIn({ session: "bob" });
    await expect(sessions.completeSignIn(callbackOf(bob.url, "bob"), { browser: bob.browser })).resolves.toMatchObject({
      sessionId: "bob",
    });
    await expect(sessions.completeSignIn(callbackOf(ada.url, "ada"), { browser: ada.browser })).resolves.toMatchObject({
      sessionId: "ada",
    });
    expect(await sessions.manager("ada").getAccessToken()).toMatch(/^at_ada_/);
    expect(await sessions.manager("bob").getAccessToken()).toMatch(/^at_bob_/);
    expect(await sessions.isSignedIn("eve")).toBe(false);
  });

  it("stores the session id and the binding's hash in the pending record, never the binding", async () => {
    const { sessions, storage } = sessionsOn();
    const { url, browser } = await sessions.beginSignIn({ session: "ada" });
    expect(browser).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const raw = (await storage.get(await pendingName(new URL(url).searchParams.get("state") ?? ""))) ?? "";
    expect(JSON.parse(raw)).toMatchObject({ sessionId: "ada", browser: await bindingHash(browser) });
    expect(raw).not.toContain(browser);
    expect(url).not.toContain(browser);
  });

  it("uses the browser binding it is given (the cookie's, or the app's own value)", async () => {
    const { sessions } = sessionsOn();
    const started = await sessions.beginSignIn({ session: "ada", browser: "app-session-7f3a9c2e" });
    expect(started.browser).toBe("app-session-7f3a9c2e");
    await expect(
      sessions.completeSignIn(callbackOf(started.url, "ada"), { browser: "app-session-7f3a9c2e" }),
    ).resolves.toMatchObject({ sessionId: "ada" });
  });

  it("refuses a callback brought by another browser before any exchange, and uses the sign-in up", async () => {
    const { sessions, calls } = sessionsOn();
    const { url, browser } = await sessions.beginSignIn({ session: "ada" });
    const attacker = await sessions.beginSignIn({ session: "mallory" });
    for (const other of [attacker.browser, undefined, ""]) {
      const again = await sessions.beginSignIn({ session: "ada", browser });
      await expect(sessions.completeSignIn(callbackOf(again.url, "mallory"), { browser: other })).rejects.toThrow(
        "STATE_MISMATCH: the sign-in was started in another browser",
      );
    }
    await expect(sessions.completeSignIn(callbackOf(url, "mallory"), { browser: attacker.browser })).rejects.toThrow(
      failure("STATE_MISMATCH"),
    );
    // Single use: the right browser now finds nothing either.
    await expect(sessions.completeSignIn(callbackOf(url, "ada"), { browser })).rejects.toThrow(
      failure("NO_PENDING_SIGN_IN"),
    );
    expect(calls).toHaveLength(0);
    expect(await sessions.isSignedIn("ada")).toBe(false);
  });

  it("refuses a callback for another session than the one the app requires, and a sign-in of no session", async () => {
    const { sessions, calls } = sessionsOn();
    const ada = await sessions.beginSignIn({ session: "ada" });
    await expect(
      sessions.completeSignIn(callbackOf(ada.url, "ada"), { browser: ada.browser, session: "bob" }),
    ).rejects.toThrow("STATE_MISMATCH: the sign-in was started for another session");
    const single = sessions.manager("ada"); // a manager's own sign-in is of its session: accepted only by it
    const begun = await single.beginAuthorization();
    await expect(single.completeAuthorization(callbackOf(begun.url, "ada"))).resolves.toBeDefined();
    expect(calls).toHaveLength(1);
  });

  it("revokes and signs out by id, touching no other session", async () => {
    const { sessions, calls } = sessionsOn();
    await signInAs(sessions, "ada");
    await signInAs(sessions, "bob");
    await signInAs(sessions, "eve");
    await sessions.revoke("ada");
    await sessions.signOut("bob");
    expect(calls.filter((c) => c.url.endsWith("/oauth/revoke"))).toHaveLength(1);
    expect([
      await sessions.isSignedIn("ada"),
      await sessions.isSignedIn("bob"),
      await sessions.isSignedIn("eve"),
    ]).toEqual([false, false, true]);
    await expect(sessions.revoke("{x}")).rejects.toThrow(failure("INVALID_SESSION_ID"));
  });

  it("refreshes each session on its own: one session's refresh never waits for another's", async () => {
    const t = sessionsOn();
    await signInAs(t.sessions, "ada");
    await signInAs(t.sessions, "bob");
    t.clock.advance(900_000);
    const held = deferred();
    t.hold.next = held.promise;
    const ada = t.sessions.manager("ada").getAccessToken();
    await sleep(5);
    t.hold.next = undefined;
    // ada's refresh is held at the tenant; bob's goes through meanwhile.
    expect(await t.sessions.manager("bob").getAccessToken()).toMatch(/^at_bob_/);
    held.resolve();
    expect(await ada).toMatch(/^at_ada_/);
  });

  it("drops the least recently used past maxCached, never one with a refresh under way", async () => {
    const t = sessionsOn({ maxCached: 2 });
    await signInAs(t.sessions, "ada");
    t.clock.advance(900_000);
    const held = deferred();
    t.hold.next = held.promise;
    const ada = t.sessions.manager("ada");
    const refreshing = ada.getAccessToken();
    await sleep(5);
    const bob = t.sessions.manager("bob");
    t.sessions.manager("eve");
    t.sessions.manager("joe");
    expect(t.sessions.manager("ada")).toBe(ada); // kept: its refresh is under way
    expect(t.sessions.manager("bob")).not.toBe(bob); // dropped, made again
    held.resolve();
    t.hold.next = undefined;
    await refreshing;
    expect(t.sessions.cached).toBeLessThanOrEqual(3);
  });

  it("drops idle managers; the storage stays the truth", async () => {
    const t = sessionsOn({ maxIdleMs: 20 });
    await signInAs(t.sessions, "ada");
    const before = t.sessions.manager("ada");
    await sleep(80);
    expect(t.sessions.cached).toBe(0);
    expect(t.sessions.manager("ada")).not.toBe(before);
    expect(await t.sessions.manager("ada").getAccessToken()).toMatch(/^at_ada_/);
  });

  it("keeps an idle manager whose tokens could not be written until it has written them", async () => {
    const inner = memoryStorage();
    let down = false;
    const storage: TokenStorage = {
      ...inner,
      set: async (key, value) => (down ? Promise.reject(new Error("storage down")) : inner.set(key, value)),
    };
    const t = sessionsOn({ storage, maxIdleMs: 20 });
    await signInAs(t.sessions, "ada");
    t.clock.advance(900_000);
    down = true;
    const refreshed = await t.sessions.manager("ada").getAccessToken(); // refreshed, but not written
    expect(refreshed).toMatch(/^at_ada_/);
    await sleep(80);
    expect(t.sessions.cached).toBe(1); // kept: the tenant has rotated, only this process has the tokens
    down = false;
    for (let i = 0; i < 100 && t.sessions.cached; i++) await sleep(20);
    expect(t.sessions.cached).toBe(0);
    expect(JSON.parse((await inner.get(`tenant-integration:${BASE}:${CLIENT_ID}:ada:tokens`)) ?? "{}")).toMatchObject({
      access_token: refreshed,
    });
  });

  it("answers a denied sign-in with AUTHORIZATION_DENIED after the browser and session checks", async () => {
    const { sessions } = sessionsOn();
    const { url, browser } = await sessions.beginSignIn({ session: "ada" });
    const state = new URL(url).searchParams.get("state") ?? "";
    await expect(
      sessions.completeSignIn(`${REDIRECT_URI}?error=access_denied&state=${state}`, { browser }),
    ).rejects.toThrow(failure("AUTHORIZATION_DENIED"));
  });
});
