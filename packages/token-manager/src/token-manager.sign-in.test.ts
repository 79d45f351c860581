import { describe, expect, it, vi } from "vitest";
import { type ErrorCode, OAuthResponseError, TransientError } from "./errors.js";
import { failure } from "./test-support/failure.js";
import { deriveCodeChallenge } from "./pkce.js";
import { memoryStorage } from "./storage/memory.js";
import { createTokenManager } from "./token-manager.js";
import type { TokenManagerOptions } from "./types.js";
import {
  BASE,
  CLIENT_ID,
  REDIRECT_URI,
  bodyOf,
  json,
  pendingName,
  setup,
  signIn,
  tokens,
} from "./test-support/harness.js";
const TOKENS_KEY = `tenant-integration:${BASE}:${CLIENT_ID}:tokens`;

async function begin(h = setup()) {
  const { url } = await h.tm.beginAuthorization();
  const params = new URL(url).searchParams;
  return { ...h, url, params, state: params.get("state") ?? "" };
}

describe("createTokenManager options", () => {
  const base: TokenManagerOptions = {
    baseUrl: BASE,
    clientId: CLIENT_ID,
    redirectUri: REDIRECT_URI,
    scopes: ["profile:read"],
  };

  it.each([
    ["a plain-http baseUrl to a remote host", { baseUrl: "http://acme.tenant.test" }],
    ["a baseUrl with credentials", { baseUrl: "https://u:p@acme.tenant.test" }],
    [
      "a baseUrl ending in /api/v1 (regression: issue 20, it failed late with a bare 404)",
      { baseUrl: "https://acme.tenant.test/api/v1" },
    ],
    ["an empty clientId", { clientId: "" }],
    ["no scopes", { scopes: [] }],
    ["a scope with a space", { scopes: ["profile:read tickets:read"] as never }],
    ["a scope the contract does not name", { scopes: ["profile:write"] as never }],
    ["a relative redirectUri", { redirectUri: "/callback" }],
  ])("rejects %s with INVALID_OPTIONS and sends nothing", (_name, override) => {
    let requests = 0;
    const fetch = async () => (requests++, new Response());
    expect(() => createTokenManager({ ...base, fetch, ...override })).toThrow(failure("INVALID_OPTIONS"));
    expect(requests).toBe(0);
  });

  it("without a fetch option, calls the global fetch looked up at call time, without a receiver", async () => {
    const tm = createTokenManager({ ...base, storage: memoryStorage() });
    const receivers: unknown[] = [];
    // Installed after the manager was created: the manager must not have captured the old fetch.
    vi.stubGlobal("fetch", function (this: unknown) {
      receivers.push(this);
      return Promise.resolve(tokens("at_global", "rt_global"));
    });
    try {
      await signIn(tm);
      await expect(tm.getAccessToken()).resolves.toBe("at_global");
      expect(receivers).toEqual([undefined]);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("accepts http on a loopback address", () => {
    expect(() => createTokenManager({ ...base, baseUrl: "http://127.0.0.1:4010" })).not.toThrow();
    expect(() => createTokenManager({ ...base, baseUrl: "http://localhost:4010" })).not.toThrow();
  });
});

describe("beginAuthorization", () => {
  it("returns the authorize URL of the tenant with all seven parameters, percent-encoded", async () => {
    const { url, params } = await begin();
    expect(url.startsWith(`${BASE}/oauth/authorize?`)).toBe(true);
    expect([...params.keys()]).toEqual([
      "response_type",
      "client_id",
      "redirect_uri",
      "scope",
      "state",
      "code_challenge",
      "code_challenge_method",
    ]);
    expect(params.get("response_type")).toBe("code");
    expect(params.get("client_id")).toBe(CLIENT_ID);
    expect(params.get("redirect_uri")).toBe(REDIRECT_URI);
    expect(params.get("scope")).toBe("profile:read tickets:read");
    expect(params.get("code_challenge_method")).toBe("S256");
    expect(params.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url).toContain(`redirect_uri=${encodeURIComponent(REDIRECT_URI)}`);
    expect(url).toContain("scope=profile%3Aread%20tickets%3Aread");
  });

  it("stores one pending sign-in whose verifier gives the challenge, with a bounded lifetime", async () => {
    const h = await begin();
    const pending = JSON.parse((await h.storage.get(await pendingName(h.state))) ?? "{}") as {
      state: string;
      verifier: string;
      expiresAt: number;
    };
    expect(pending.state).toBe(h.state);
    expect(await deriveCodeChallenge(pending.verifier)).toBe(h.params.get("code_challenge"));
    expect(pending.expiresAt).toBe(h.clock.now() + 600_000);
    expect(h.calls).toHaveLength(0);
  });

  it("creates a fresh state and verifier every time", async () => {
    const h = setup();
    const a = new URL((await h.tm.beginAuthorization()).url).searchParams;
    const b = new URL((await h.tm.beginAuthorization()).url).searchParams;
    expect(a.get("state")).not.toBe(b.get("state"));
    expect(a.get("code_challenge")).not.toBe(b.get("code_challenge"));
  });

  it("keeps the pending sign-in in pendingStorage when one is given", async () => {
    const pendingStorage = memoryStorage();
    const h = setup({ pendingStorage });
    const { url } = await h.tm.beginAuthorization();
    const name = await pendingName(new URL(url).searchParams.get("state") ?? "");
    expect(JSON.parse((await pendingStorage.get(name)) ?? "null")).toMatchObject({
      state: expect.any(String),
      verifier: expect.any(String),
    });
    expect(await h.storage.get(name)).toBeUndefined();
    await signIn(h.tm);
    expect(JSON.parse((await h.storage.get(TOKENS_KEY)) ?? "null")).toMatchObject({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
    });
  });

  it("asks for the scopes of this sign-in when given, in place of the options' scopes", async () => {
    const h = setup();
    const { url } = await h.tm.beginAuthorization({ scopes: ["profile:read", "tickets:write"] });
    expect(new URL(url).searchParams.get("scope")).toBe("profile:read tickets:write");
    // The next sign-in without scopes asks for the options' scopes again.
    const next = await h.tm.beginAuthorization();
    expect(new URL(next.url).searchParams.get("scope")).toBe("profile:read tickets:read");
  });

  it.each([
    ["no scope", []],
    ["a name that is not one of the contract's scopes", ["profile:write"]],
    ["a misspelt scope", ["tickets:reed"]],
    ["two scopes in one string", ["profile:read tickets:read"]],
  ])("refuses scopes for one sign-in with %s, before storing anything", async (_name, scopes) => {
    const written: string[] = [];
    const storage = memoryStorage();
    const h = setup({
      storage: {
        ...storage,
        setExpiring: async (key) => void written.push(key),
        set: async (key) => void written.push(key),
      },
    });
    const error = await h.tm.beginAuthorization({ scopes: scopes as never }).catch((e: unknown) => e);
    expect(error).toEqual(failure("INVALID_OPTIONS"));
    expect((error as Error).message).toMatch(/^INVALID_OPTIONS: scopes/);
    expect(written).toEqual([]);
  });

  it("names the unknown scope in the error", async () => {
    const error = await setup()
      .tm.beginAuthorization({ scopes: ["profile:read", "tickets:reed" as never] })
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe('INVALID_OPTIONS: scopes: "tickets:reed" is not a scope of the service');
  });

  it("surfaces a failing pending storage as STORAGE_FAILED", async () => {
    const failing = { ...memoryStorage(), setExpiring: async () => Promise.reject(new Error("quota")) };
    const h = setup({ pendingStorage: failing });
    await expect(h.tm.beginAuthorization()).rejects.toThrow(failure("STORAGE_FAILED"));
  });
});

describe("completeAuthorization", () => {
  it("exchanges the code at POST /oauth/token with a JSON body and no secret, and stores the tokens", async () => {
    const h = await begin();
    const pending = JSON.parse((await h.storage.get(await pendingName(h.state))) ?? "{}") as { verifier: string };
    const info = await h.tm.completeAuthorization(new URL(`${REDIRECT_URI}?code=code_abc&state=${h.state}`));
    expect(h.calls).toHaveLength(1);
    const [call] = h.calls;
    expect(call?.url).toBe(`${BASE}/oauth/token`);
    expect(call?.method).toBe("POST");
    expect(call?.headers).toMatchObject({ accept: "application/json", "content-type": "application/json" });
    expect(call?.headers["authorization"]).toBeUndefined();
    expect(call?.redirect).toBe("manual");
    expect(bodyOf(call!)).toEqual({
      grant_type: "authorization_code",
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      code: "code_abc",
      code_verifier: pending.verifier,
    });
    expect(info.expiresAt).toBe(h.clock.now() + 900_000);
    expect(await h.tm.getAccessToken()).toBe("at_1");
    expect(h.calls).toHaveLength(1);
  });

  it("computes expiry from the local receive time and expires_in in seconds", async () => {
    const h = await begin();
    h.server.queue.push(() => {
      h.clock.advance(5_000); // the response arrives 5 s after the request left
      return tokens("at_x", "rt_x", 900);
    });
    const info = await h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${h.state}`);
    expect(info.expiresAt).toBe(h.clock.now() + 900_000);
  });

  const rejections: [string, (state: string) => string, ErrorCode][] = [
    ["a missing state", () => `${REDIRECT_URI}?code=c`, "STATE_MISSING"],
    ["an empty state", () => `${REDIRECT_URI}?code=c&state=`, "STATE_MISSING"],
    // Pending sign-ins are found by state: another state finds none (spec/token-store, "The callback").
    [
      "a state that differs by one character",
      (s) => `${REDIRECT_URI}?code=c&state=${s.slice(0, -1)}${s.endsWith("A") ? "B" : "A"}`,
      "NO_PENDING_SIGN_IN",
    ],
    ["a state with one character more", (s) => `${REDIRECT_URI}?code=c&state=${s}x`, "NO_PENDING_SIGN_IN"],
    ["a callback without code", (s) => `${REDIRECT_URI}?state=${s}`, "INVALID_CALLBACK"],
    ["a callback that is not a URL", () => "not a url", "INVALID_CALLBACK"],
  ];

  it.each(rejections)("rejects %s with its code and sends no request", async (_name, callback, code) => {
    const h = await begin();
    const error = await h.tm.completeAuthorization(callback(h.state)).catch((e: unknown) => e);
    expect(error).toEqual(failure(code));
    expect(h.calls).toHaveLength(0);
  });

  const elsewhere: [string, string][] = [
    ["another scheme", "https://127.0.0.1:53682/callback"],
    ["another host", "http://localhost:53682/callback"],
    ["another port", "http://127.0.0.1:53683/callback"],
    ["no port", "http://127.0.0.1/callback"],
    ["another path", "http://127.0.0.1:53682/callback2"],
    ["a path with a trailing slash", "http://127.0.0.1:53682/callback/"],
    ["a path in another case", "http://127.0.0.1:53682/Callback"],
    ["a path below it", "http://127.0.0.1:53682/callback/x"],
    ["credentials", "http://user@127.0.0.1:53682/callback"],
    ["another site entirely", "https://evil.test/callback"],
  ];

  it.each(elsewhere)(
    "rejects a callback at %s than the redirect URI (mix-up defence) and sends no request",
    async (_name, at) => {
      const h = await begin();
      const error = await h.tm.completeAuthorization(`${at}?code=c&state=${h.state}`).catch((e: unknown) => e);
      expect(error).toEqual(failure("INVALID_CALLBACK"));
      expect(h.calls).toHaveLength(0);
      // The pending sign-in is used up: the right callback cannot follow.
      await expect(h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${h.state}`)).rejects.toMatchObject({
        code: "NO_PENDING_SIGN_IN",
      });
      expect(h.calls).toHaveLength(0);
    },
  );

  it("accepts a callback whose redirect URI differs only in how the URL parser normalises it", async () => {
    const h = setup({ redirectUri: "HTTPS://App.Example.org:443/callback" });
    const { url } = await h.tm.beginAuthorization();
    const state = new URL(url).searchParams.get("state") ?? "";
    await h.tm.completeAuthorization(`https://app.example.org/callback?code=c&state=${state}#`);
    expect(h.calls).toHaveLength(1);
    expect(bodyOf(h.calls[0]!)).toMatchObject({ redirect_uri: "HTTPS://App.Example.org:443/callback" });
  });

  it.each([
    ["state", (s: string) => `code=c&state=${s}&state=${s}`],
    ["state, the second one different", (s: string) => `code=c&state=${s}&state=other`],
    ["state, the first one different", (s: string) => `code=c&state=other&state=${s}`],
    ["code", (s: string) => `code=c&state=${s}&code=d`],
    ["code, both equal", (s: string) => `code=c&code=c&state=${s}`],
    ["error", (s: string) => `error=access_denied&error=server_error&state=${s}`],
    ["error, next to a code", (s: string) => `code=c&error=access_denied&error=&state=${s}`],
  ])(
    "rejects a callback that repeats %s (ambiguous) with INVALID_CALLBACK and sends no request",
    async (_name, query) => {
      const h = await begin();
      const error = await h.tm.completeAuthorization(`${REDIRECT_URI}?${query(h.state)}`).catch((e: unknown) => e);
      expect(error).toEqual(failure("INVALID_CALLBACK"));
      expect(h.calls).toHaveLength(0);
    },
  );

  it("rejects an error parameter from the server with AUTHORIZATION_DENIED and sends no request", async () => {
    const h = await begin();
    const error = await h.tm
      .completeAuthorization(`${REDIRECT_URI}?error=access_denied&error_description=User+said+no&state=${h.state}`)
      .catch((e: unknown) => e);
    expect(error).toEqual(failure("AUTHORIZATION_DENIED"));
    expect(error).toMatchObject({
      code: "AUTHORIZATION_DENIED",
      error: "access_denied",
      errorDescription: "User said no",
    });
    expect(h.calls).toHaveLength(0);
  });

  it("rejects an expired pending sign-in and sends no request", async () => {
    const h = await begin();
    h.clock.advance(600_001);
    await expect(h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${h.state}`)).rejects.toMatchObject({
      code: "STATE_EXPIRED",
    });
    expect(h.calls).toHaveLength(0);
  });

  it("rejects a reused state: the pending sign-in is single use", async () => {
    const h = setup();
    const callback = await signIn(h.tm);
    expect(h.calls).toHaveLength(1);
    await expect(h.tm.completeAuthorization(callback)).rejects.toMatchObject({ code: "NO_PENDING_SIGN_IN" });
    expect(h.calls).toHaveLength(1);
  });

  it("uses up the pending sign-in on a failed check, so the right state cannot be retried", async () => {
    const h = await begin();
    await expect(
      h.tm.completeAuthorization(`http://localhost:53682/callback?code=c&state=${h.state}`),
    ).rejects.toMatchObject({ code: "INVALID_CALLBACK" });
    await expect(h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${h.state}`)).rejects.toMatchObject({
      code: "NO_PENDING_SIGN_IN",
    });
    expect(h.calls).toHaveLength(0);
  });

  it.each([
    ["location.search", (s: string) => `?code=c&state=${s}`],
    ["the query without its ?", (s: string) => `code=c&state=${s}`],
    ["a path and query (location.pathname + location.search)", (s: string) => `/callback?code=c&state=${s}`],
  ])(
    "refuses %s in place of the whole URL before using up the pending sign-in (regression: issue 20)",
    async (_name, partial) => {
      const h = await begin();
      const error = await h.tm.completeAuthorization(partial(h.state)).catch((e: unknown) => e);
      expect(error).toEqual(failure("INVALID_CALLBACK"));
      expect((error as Error).message).toBe(
        "INVALID_CALLBACK: not an absolute URL: pass the whole callback URL (location.href), not location.search",
      );
      expect((error as Error).message).not.toContain(h.state);
      expect(h.calls).toHaveLength(0);
      // The pending sign-in is still there: the whole URL then completes it.
      await h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${h.state}`);
      expect(await h.tm.getAccessToken()).toBe("at_1");
    },
  );

  it("rejects a callback when no sign-in was begun, or the stored one is unreadable", async () => {
    const h = setup();
    await expect(h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=s`)).rejects.toMatchObject({
      code: "NO_PENDING_SIGN_IN",
    });
    await h.storage.set(await pendingName("s"), "{not json");
    await expect(h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=s`)).rejects.toMatchObject({
      code: "NO_PENDING_SIGN_IN",
    });
    expect(h.calls).toHaveLength(0);
  });

  it("completes an earlier sign-in after a newer one began: each is found by its state (two tabs, a double click)", async () => {
    const h = await begin();
    await h.tm.beginAuthorization();
    await h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${h.state}`);
    expect(await h.tm.getAccessToken()).toBe("at_1");
  });

  it("rejects a state whose key holds the record of another state, in constant time, sending nothing", async () => {
    const h = await begin();
    const other = "B".repeat(43);
    await h.storage.set(await pendingName(other), (await h.storage.get(await pendingName(h.state))) ?? "");
    await expect(h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${other}`)).rejects.toMatchObject({
      code: "STATE_MISMATCH",
    });
    expect(h.calls).toHaveLength(0);
  });

  it("turns an RFC 6749 §5.2 error of the exchange into OAuthResponseError and stores nothing", async () => {
    const h = await begin();
    h.server.queue.push(() => json(400, { error: "invalid_grant", error_description: "The code was already used." }));
    const error = await h.tm
      .completeAuthorization(`${REDIRECT_URI}?code=code_abc&state=${h.state}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthResponseError);
    expect(error).toMatchObject({
      status: 400,
      error: "invalid_grant",
      errorDescription: "The code was already used.",
    });
    expect(await h.storage.get(TOKENS_KEY)).toBeUndefined();
  });

  it.each([
    ["an HTML page with status 200", () => new Response("<html>hello</html>", { status: 200 })],
    ["JSON without access_token", () => json(200, { token_type: "Bearer", expires_in: 900, refresh_token: "r" })],
    ["a response without refresh_token", () => tokens("at_1")],
    ["expires_in of zero", () => tokens("at_1", "rt_1", 0)],
    ["a 400 HTML page", () => new Response("<html>bad</html>", { status: 400 })],
    ["a redirect", () => new Response(null, { status: 302, headers: { Location: "https://evil.test/" } })],
  ])("rejects %s with INVALID_RESPONSE and stores nothing", async (_name, answer) => {
    const h = await begin();
    h.server.queue.push(answer);
    await expect(h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${h.state}`)).rejects.toThrow(
      failure("INVALID_RESPONSE"),
    );
    expect(await h.storage.get(TOKENS_KEY)).toBeUndefined();
    await expect(h.tm.getAccessToken()).rejects.toMatchObject({ code: "NOT_SIGNED_IN" });
  });

  it("turns a network error or a 5xx of the exchange into TransientError, without retrying the single-use code", async () => {
    const h = await begin();
    h.server.queue.push(() => Promise.reject(new TypeError("fetch failed")));
    await expect(h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${h.state}`)).rejects.toBeInstanceOf(
      TransientError,
    );
    expect(h.calls).toHaveLength(1);
    const again = await begin(h);
    again.server.queue.push(() => new Response("down", { status: 503 }));
    await expect(h.tm.completeAuthorization(`${REDIRECT_URI}?code=c&state=${again.state}`)).rejects.toMatchObject({
      code: "TRANSIENT",
      status: 503,
    });
    expect(h.calls).toHaveLength(2);
  });

  it("sends every request to the tenant's origin only", async () => {
    const h = setup({ baseUrl: "https://acme.tenant.test:8443/" });
    await signIn(h.tm);
    h.clock.advance(900_000);
    await h.tm.getAccessToken();
    await h.tm.revoke();
    expect(h.calls.map((c) => c.url)).toEqual([
      "https://acme.tenant.test:8443/oauth/token",
      "https://acme.tenant.test:8443/oauth/token",
      "https://acme.tenant.test:8443/oauth/revoke",
    ]);
  });
});
