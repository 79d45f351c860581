/**
 * What a page or a tool asks without a request (`isSignedIn`, `getSession`), the sign-in and sign-out
 * events, their delivery to the other tabs that share `webStorage(localStorage)`, and the pending
 * sign-in kept per tab by default.
 *
 * Tabs are played in one process: `localStorage` is one Web Storage object every tab sees,
 * `sessionStorage` a different one per tab (installed as the global while that tab's storage is
 * made), and tabs talk over Node's `BroadcastChannel`, which delivers between the channels of one
 * thread as a browser's does between tabs. Regression guards for issue 20: two tabs signing in at
 * once took each other's pending sign-in (STATE_MISMATCH, then NO_PENDING_SIGN_IN); a tab that signed
 * out left the others handing out the old access token from memory.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SessionEndedError, type ErrorCode } from "./errors.js";
import { failure } from "./test-support/failure.js";
import { memoryStorage } from "./storage/memory.js";
import { webStorage, type WebStorageLike } from "./storage/web.js";
import type { TokenManager, TokenManagerEvents } from "./types.js";
import {
  BASE,
  CLIENT_ID,
  REDIRECT_URI,
  json,
  pendingName,
  setup,
  signIn,
  tokenServer,
  type Setup,
} from "./test-support/harness.js";

const TOKENS_KEY = `tenant-integration:${BASE}:${CLIENT_ID}:tokens`;

function fakeWebStorage(): WebStorageLike & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => void map.set(k, v),
    removeItem: (k) => void map.delete(k),
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("isSignedIn and getSession", () => {
  it("say no session before a sign-in, and send no request", async () => {
    const h = setup();
    expect(await h.tm.isSignedIn()).toBe(false);
    expect(await h.tm.getSession()).toBeUndefined();
    expect(h.calls).toEqual([]);
  });

  it("tell the stored session (expiry and scope, never a token) without a request, also once the access token expired", async () => {
    const h = setup();
    h.server.queue.push(() =>
      json(200, {
        access_token: "at_1",
        refresh_token: "rt_1",
        token_type: "Bearer",
        expires_in: 900,
        scope: "profile:read",
      }),
    );
    await signIn(h.tm);
    const requests = h.calls.length;
    const session = { expiresAt: h.clock.now() + 900_000, scope: "profile:read" };
    expect(await h.tm.isSignedIn()).toBe(true);
    expect(await h.tm.getSession()).toEqual(session);
    h.clock.advance(3_600_000); // the refresh token still holds the session
    expect(await h.tm.isSignedIn()).toBe(true);
    expect(await h.tm.getSession()).toEqual(session);
    expect(h.calls).toHaveLength(requests);
    expect(JSON.stringify(await h.tm.getSession())).not.toMatch(/at_1|rt_1/);
  });

  it("read the storage, so a session stored by another process counts, and a cleared one does not", async () => {
    const storage = memoryStorage();
    const writer = setup({ storage });
    const reader = setup({ storage });
    await signIn(writer.tm);
    expect(await reader.tm.isSignedIn()).toBe(true);
    await writer.tm.signOut();
    expect(await reader.tm.isSignedIn()).toBe(false);
    expect(reader.calls).toEqual([]);
  });

  it("count tokens whose write failed, which this process holds and uses", async () => {
    const base = memoryStorage();
    let failWrites = false;
    const storage = {
      ...base,
      set: async (k: string, v: string) => (failWrites ? Promise.reject(new Error("disk full")) : base.set(k, v)),
    };
    const h = setup({ storage });
    await signIn(h.tm);
    h.clock.advance(900_000);
    failWrites = true;
    expect(await h.tm.getAccessToken()).toBe("at_2");
    expect(await h.tm.getSession()).toEqual({ expiresAt: h.clock.now() + 900_000, scope: undefined });
  });

  it("say no session when the stored tokens are unreadable, and fail with STORAGE_FAILED when the storage cannot be read", async () => {
    const h = setup();
    await h.storage.set(TOKENS_KEY, "{not json");
    expect(await h.tm.isSignedIn()).toBe(false);
    const broken = setup({ storage: { ...memoryStorage(), get: () => Promise.reject(new Error("ECONNRESET")) } });
    await expect(broken.tm.isSignedIn()).rejects.toThrow(failure("STORAGE_FAILED"));
    await expect(broken.tm.getSession()).rejects.toThrow(failure("STORAGE_FAILED"));
  });

  it("report a stored value that is not a token record on every read, rather than take it for no tokens, and leave it for a sign-in to replace", async () => {
    const h = setup();
    await h.storage.set(TOKENS_KEY, JSON.stringify({ access: "x", expires: 900 }));
    const failures: string[] = [];
    h.tm.on("storage-failed", ({ error }) => failures.push(error.message));
    expect(await h.tm.isSignedIn()).toBe(false);
    const error = (await h.tm.getAccessToken().catch((e: unknown) => e)) as Error;
    expect(error).toEqual(failure("NOT_SIGNED_IN"));
    expect(error.message).toBe(
      `NOT_SIGNED_IN: the stored tokens are unreadable: the value under ${TOKENS_KEY} is not a token record; signing in replaces it`,
    );
    expect(failures).toEqual([
      expect.stringContaining("not a token record"),
      expect.stringContaining("not a token record"),
    ]);
    expect(h.calls).toHaveLength(0);
    await signIn(h.tm);
    expect(await h.tm.isSignedIn()).toBe(true);
    expect(failures).toHaveLength(2);
  });

  it("after session-ended, say signed out", async () => {
    const h = setup();
    await signIn(h.tm);
    h.server.queue.push(() => json(400, { error: "invalid_grant" }));
    h.clock.advance(900_000);
    await expect(h.tm.getAccessToken()).rejects.toBeInstanceOf(SessionEndedError);
    expect(await h.tm.isSignedIn()).toBe(false);
  });
});

/** Records every event of the manager, as `[event, payload]`. */
function record(tm: TokenManager) {
  const seen: [keyof TokenManagerEvents, unknown][] = [];
  for (const event of ["signed-in", "signed-out", "session-ended", "revoked", "tokens-refreshed"] as const) {
    tm.on(event, (payload) => seen.push([event, payload]));
  }
  return seen;
}

describe("the signed-in and signed-out events, in one tab", () => {
  it("signed-in after completeAuthorization, with the session and no token", async () => {
    const h = setup();
    const seen = record(h.tm);
    await signIn(h.tm);
    expect(seen).toEqual([["signed-in", { expiresAt: h.clock.now() + 900_000, scope: undefined, otherTab: false }]]);
  });

  it("signed-out after signOut, and after revoke (with revoked as well)", async () => {
    const h = setup();
    await signIn(h.tm);
    const seen = record(h.tm);
    await h.tm.signOut();
    expect(seen).toEqual([["signed-out", { revoked: false, otherTab: false }]]);
    await signIn(h.tm);
    seen.length = 0;
    await h.tm.revoke();
    expect(seen).toEqual([
      ["revoked", undefined],
      ["signed-out", { revoked: true, otherTab: false }],
    ]);
  });

  it("session-ended tells that it happened here", async () => {
    const h = setup();
    await signIn(h.tm);
    const seen = record(h.tm);
    h.server.queue.push(() => json(400, { error: "invalid_grant" }));
    h.clock.advance(900_000);
    await expect(h.tm.getAccessToken()).rejects.toBeInstanceOf(SessionEndedError);
    expect(seen).toEqual([["session-ended", { error: expect.any(SessionEndedError), otherTab: false }]]);
  });
});

/**
 * `count` tabs of one origin: one `localStorage`, one `sessionStorage` each, each manager made with
 * `webStorage(localStorage)` and nothing else, as the docs' browser snippet does.
 */
function tabs(
  count: number,
): (Setup & { session: ReturnType<typeof fakeWebStorage>; seen: ReturnType<typeof record> })[] {
  const local = fakeWebStorage();
  vi.stubGlobal("localStorage", local);
  const server = tokenServer();
  return Array.from({ length: count }, () => {
    const session = fakeWebStorage();
    vi.stubGlobal("sessionStorage", session);
    const tab = setup({ storage: webStorage(localStorage) }, server);
    return { ...tab, session, seen: record(tab.tm) };
  });
}

/** Lets the BroadcastChannel messages posted so far arrive. */
const delivered = () => new Promise((resolve) => setTimeout(resolve, 50));

describe("tabs sharing webStorage(localStorage)", () => {
  it("keep each tab's pending sign-in in its own sessionStorage by default, so two tabs signing in at once both succeed", async () => {
    const [a, b] = tabs(2) as [ReturnType<typeof tabs>[0], ReturnType<typeof tabs>[0]];
    const stateOf = async (tab: Setup) =>
      new URL((await tab.tm.beginAuthorization()).url).searchParams.get("state") ?? "";
    // Both begin before either callback arrives.
    const [stateA, stateB] = [await stateOf(a), await stateOf(b)];
    const outcomes = await Promise.all(
      [
        [a, stateA],
        [b, stateB],
      ].map(([tab, state]) =>
        (tab as Setup).tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${state as string}`).then(
          () => "signed in",
          (e: { code: ErrorCode }) => e.code,
        ),
      ),
    );
    expect(outcomes).toEqual(["signed in", "signed in"]);
    expect(localStorage.getItem(await pendingName(stateA))).toBeNull();
    expect(localStorage.getItem(await pendingName(stateB))).toBeNull();
    expect([a.session.map.size, b.session.map.size]).toEqual([0, 0]); // each pending sign-in used up
  });

  it("keep the pending sign-in where pendingStorage says when it is given", async () => {
    vi.stubGlobal("localStorage", fakeWebStorage());
    vi.stubGlobal("sessionStorage", fakeWebStorage());
    const pendingStorage = memoryStorage();
    const h = setup({ storage: webStorage(localStorage), pendingStorage });
    const { url } = await h.tm.beginAuthorization();
    const name = await pendingName(new URL(url).searchParams.get("state") ?? "");
    const pending = JSON.parse((await pendingStorage.get(name)) ?? "null") as { state?: string } | null;
    expect(pending?.state).toBe(new URL(url).searchParams.get("state"));
    expect(sessionStorage.getItem(name)).toBeNull();
    expect(localStorage.getItem(name)).toBeNull();
  });

  it("keep the pending sign-in with the tokens for any other Web Storage (sessionStorage is per tab already)", async () => {
    vi.stubGlobal("localStorage", fakeWebStorage());
    const own = fakeWebStorage();
    vi.stubGlobal("sessionStorage", own);
    const h = setup({ storage: webStorage(sessionStorage) });
    const { url } = await h.tm.beginAuthorization();
    expect(own.map.has(await pendingName(new URL(url).searchParams.get("state") ?? ""))).toBe(true);
  });

  it("tell the other tabs of a sign-in, a sign-out, a revocation and the end of the session, with no token in any message", async () => {
    const [a, b, c] = tabs(3) as [ReturnType<typeof tabs>[0], ReturnType<typeof tabs>[0], ReturnType<typeof tabs>[0]];
    const posted: unknown[] = [];
    const spy = new BroadcastChannel(`tenant-integration:${BASE}:${CLIENT_ID}:events`);
    spy.onmessage = (e: MessageEvent) => posted.push(e.data);
    try {
      await signIn(a.tm);
      await delivered();
      const session = { expiresAt: a.clock.now() + 900_000, scope: undefined };
      expect(b.seen).toEqual([["signed-in", { ...session, otherTab: true }]]);
      expect(c.seen).toEqual(b.seen);

      b.seen.length = c.seen.length = 0;
      await a.tm.signOut();
      await delivered();
      expect(b.seen).toEqual([["signed-out", { revoked: false, otherTab: true }]]);

      await signIn(a.tm);
      await b.tm.revoke();
      await delivered();
      expect(a.seen.at(-1)).toEqual(["signed-out", { revoked: true, otherTab: true }]);
      expect(c.seen.at(-1)).toEqual(["signed-out", { revoked: true, otherTab: true }]);

      await signIn(c.tm);
      c.server.queue.push(() => json(400, { error: "invalid_grant", error_description: "Refresh token revoked" }));
      c.clock.advance(900_000);
      await expect(c.tm.getAccessToken()).rejects.toBeInstanceOf(SessionEndedError);
      await delivered();
      const ended = a.seen.at(-1) as [string, { error: SessionEndedError; otherTab: boolean }];
      expect(ended).toEqual(["session-ended", { error: expect.any(SessionEndedError), otherTab: true }]);
      expect(ended[1].error).toMatchObject({
        code: "SESSION_ENDED",
        status: 400,
        error: "invalid_grant",
        errorDescription: "Refresh token revoked",
      });
      expect(JSON.stringify(posted)).not.toMatch(/at_|rt_|code_|verifier/);
    } finally {
      spy.close();
    }
  });

  it("a tab told of a sign-out in another tab stops handing out the old access token from memory, and sends nothing", async () => {
    const [a, b] = tabs(2) as [ReturnType<typeof tabs>[0], ReturnType<typeof tabs>[0]];
    await signIn(a.tm);
    expect(await b.tm.getAccessToken()).toBe("at_1"); // now held in b's memory
    await a.tm.signOut();
    await delivered();
    await expect(b.tm.getAccessToken()).rejects.toThrow(failure("NOT_SIGNED_IN"));
    expect(await b.tm.isSignedIn()).toBe(false);
    expect(b.calls).toEqual([]);
  });

  it("a tab told of a sign-in in another tab hands out the new session's token, not its own older one", async () => {
    const [a, b] = tabs(2) as [ReturnType<typeof tabs>[0], ReturnType<typeof tabs>[0]];
    await signIn(a.tm);
    expect(await b.tm.getAccessToken()).toBe("at_1");
    await signIn(a.tm); // a second sign-in (another user, other scopes): at_2
    await delivered();
    expect(await b.tm.getAccessToken()).toBe("at_2");
  });
});
