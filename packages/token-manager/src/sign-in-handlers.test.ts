/**
 * The Web-standard handlers of a server's sign-in: two users signing in at once on one server, the
 * binding cookie (its attributes from spec/token-store/vectors/sessions.json), the refusals.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createSessions } from "./sessions.js";
import { bindingCookie, bindingFromCookie, signInHandlers, type SignInHandlersOptions } from "./sign-in-handlers.js";
import { memoryStorage } from "./storage/memory.js";
import { BASE, CLIENT_ID, bodyOf, recordingFetch, tokens } from "./test-support/harness.js";

const VECTORS = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "spec", "token-store", "vectors");
const vectors = JSON.parse(readFileSync(join(VECTORS, "sessions.json"), "utf8")) as {
  bindingCookieValues: { value: string; valid: boolean }[];
  cookies: {
    redirectUri: string;
    pendingLifetimeMs: number;
    name: string;
    path: string;
    maxAge: number;
    httpOnly: boolean;
    secure: boolean;
    sameSite: string;
  }[];
};

const APP = "https://app.example.org";
const REDIRECT = `${APP}/tenant/callback`;

/** A server of sessions whose app user is named by the `user` cookie; the tenant's tokens name the code. */
function server(extra: Partial<SignInHandlersOptions> = {}) {
  const { fetch, calls } = recordingFetch(async (call) => {
    const code = String(bodyOf(call)["code"]);
    return tokens(`at_${code}`, `rt_${code}`);
  });
  const sessions = createSessions({
    baseUrl: BASE,
    clientId: CLIENT_ID,
    redirectUri: REDIRECT,
    scopes: ["profile:read"],
    storage: memoryStorage(),
    fetch,
  });
  const errors: unknown[] = [];
  const handlers = signInHandlers(sessions, {
    sessionOf: (request) => /(?:^|; )user=([^;]+)/.exec(request.headers.get("cookie") ?? "")?.[1],
    onError: (e) => void errors.push(e),
    ...extra,
  });
  return { sessions, handlers, calls, errors };
}

/** A browser: its cookies, sent with each request. */
function browser(user: string) {
  const jar = new Map<string, string>([["user", user]]);
  return {
    jar,
    request(url: string, init: RequestInit = {}) {
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
      return new Request(url, { ...init, headers: { cookie, ...(init.headers as Record<string, string>) } });
    },
    keep(response: Response) {
      const set = response.headers.get("set-cookie");
      if (set) {
        const [pair] = set.split(";");
        const at = (pair as string).indexOf("=");
        jar.set((pair as string).slice(0, at), (pair as string).slice(at + 1));
      }
      return response;
    },
  };
}

/** The callback URL the tenant sends the browser to, for the authorize URL `location`. */
const tenantRedirect = (location: string, code: string) =>
  `${REDIRECT}?code=${code}&state=${new URL(location).searchParams.get("state") ?? ""}`;

describe("signInHandlers", () => {
  it("sign two users in at once on one server, each session holding only its own account", async () => {
    const { sessions, handlers } = server();
    const ada = browser("ada");
    const bob = browser("bob");
    const adaStart = ada.keep(await handlers.start(ada.request(`${APP}/connect`)));
    const bobStart = bob.keep(await handlers.start(bob.request(`${APP}/connect`, { method: "POST" })));
    expect([adaStart.status, bobStart.status]).toEqual([303, 303]);
    expect(adaStart.headers.get("location")).toMatch(new RegExp(`^${BASE}/oauth/authorize\\?`));
    expect(adaStart.headers.get("cache-control")).toBe("no-store");
    const bobBack = await handlers.callback(bob.request(tenantRedirect(bobStart.headers.get("location") ?? "", "bob")));
    const adaBack = await handlers.callback(ada.request(tenantRedirect(adaStart.headers.get("location") ?? "", "ada")));
    expect([adaBack.status, bobBack.status]).toEqual([303, 303]);
    expect(adaBack.headers.get("location")).toBe("/");
    expect(adaBack.headers.get("referrer-policy")).toBe("no-referrer");
    expect(await sessions.manager("ada").getAccessToken()).toBe("at_ada");
    expect(await sessions.manager("bob").getAccessToken()).toBe("at_bob");
  });

  it("refuse a callback replayed in another browser (login CSRF) before any exchange, with 400 and no secret", async () => {
    const { handlers, calls, errors, sessions } = server();
    const mallory = browser("mallory");
    const start = mallory.keep(await handlers.start(mallory.request(`${APP}/connect`)));
    const link = tenantRedirect(start.headers.get("location") ?? "", "mallory");
    const victim = browser("mallory"); // even logged in as the same app user: another browser
    const answer = await handlers.callback(victim.request(link));
    expect(answer.status).toBe(400);
    const text = await answer.text();
    expect(text).toBe("Sign-in failed (STATE_MISMATCH): the sign-in was started in another browser; start it again.");
    expect(text).not.toContain(new URL(link).searchParams.get("state"));
    expect(calls).toHaveLength(0);
    expect(errors).toEqual([expect.objectContaining({ code: "STATE_MISMATCH" })]);
    expect(await sessions.isSignedIn("mallory")).toBe(false);
  });

  it("refuse a callback whose sign-in was begun for another app user", async () => {
    const { handlers, calls } = server();
    const shared = browser("ada");
    const start = shared.keep(await handlers.start(shared.request(`${APP}/connect`)));
    shared.jar.set("user", "bob"); // another user logged in on this browser meanwhile
    const answer = await handlers.callback(shared.request(tenantRedirect(start.headers.get("location") ?? "", "ada")));
    expect(answer.status).toBe(400);
    expect(await answer.text()).toBe(
      "Sign-in failed (STATE_MISMATCH): the sign-in was started for another session; start it again.",
    );
    expect(calls).toHaveLength(0);
  });

  it("reuse a valid binding cookie, so two tabs of one browser both complete", async () => {
    const { handlers, sessions } = server();
    const tabs = browser("ada");
    const first = tabs.keep(await handlers.start(tabs.request(`${APP}/connect`)));
    const binding = tabs.jar.get("__Host-tenant-signin");
    const second = tabs.keep(await handlers.start(tabs.request(`${APP}/connect`)));
    expect(tabs.jar.get("__Host-tenant-signin")).toBe(binding);
    for (const start of [second, first])
      expect(
        (await handlers.callback(tabs.request(tenantRedirect(start.headers.get("location") ?? "", "ada")))).status,
      ).toBe(303);
    expect(await sessions.isSignedIn("ada")).toBe(true);
  });

  it("answer 401 when nobody is logged in, 405 to another method, 404 off the redirect URI's path", async () => {
    const { handlers } = server();
    expect((await handlers.start(new Request(`${APP}/connect`))).status).toBe(401);
    expect((await handlers.start(new Request(`${APP}/connect`, { method: "PUT" }))).status).toBe(405);
    expect((await handlers.callback(new Request(`${APP}/elsewhere?code=c&state=s`))).status).toBe(404);
    expect((await handlers.callback(new Request(`${REDIRECT}?code=c&state=s`))).status).toBe(401);
  });

  it("rebuild the callback URL from the configured redirect URI, not the Host the request came by", async () => {
    const { handlers, sessions } = server();
    const ada = browser("ada");
    const start = ada.keep(await handlers.start(ada.request(`${APP}/connect`)));
    const query = new URL(tenantRedirect(start.headers.get("location") ?? "", "ada")).search;
    const internal = ada.request(`http://10.0.0.7:8080/tenant/callback${query}`, {
      headers: { host: "10.0.0.7:8080" },
    });
    expect((await handlers.callback(internal)).status).toBe(303);
    expect(await sessions.isSignedIn("ada")).toBe(true);
  });

  it("use the app's own binding instead of the cookie when bindingOf is given", async () => {
    const { handlers, sessions } = server({ bindingOf: (r) => r.headers.get("x-app-session") });
    const ada = browser("ada");
    const start = await handlers.start(
      ada.request(`${APP}/connect`, { headers: { "x-app-session": "app-session-7f3a9c2e" } }),
    );
    expect(start.headers.get("set-cookie")).toBeNull();
    const link = tenantRedirect(start.headers.get("location") ?? "", "ada");
    expect((await handlers.callback(ada.request(link, { headers: { "x-app-session": "another" } }))).status).toBe(400);
    const again = await handlers.start(
      ada.request(`${APP}/connect`, { headers: { "x-app-session": "app-session-7f3a9c2e" } }),
    );
    const ok = tenantRedirect(again.headers.get("location") ?? "", "ada");
    expect(
      (await handlers.callback(ada.request(ok, { headers: { "x-app-session": "app-session-7f3a9c2e" } }))).status,
    ).toBe(303);
    expect(await sessions.isSignedIn("ada")).toBe(true);
  });
});

describe("the binding cookie", () => {
  it.each(vectors.cookies.map((v) => [v.redirectUri, v]))("for %s has the shared attributes", (_u, v) => {
    const header = bindingCookie(v.redirectUri, v.pendingLifetimeMs, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8");
    const [pair, ...attributes] = header.split("; ");
    expect(pair).toBe(`${v.name}=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8`);
    const expected = [`Path=${v.path}`, `Max-Age=${v.maxAge}`, "HttpOnly", `SameSite=${v.sameSite}`];
    if (v.secure) expected.push("Secure");
    expect(attributes.sort()).toEqual(expected.sort());
    expect(v.httpOnly).toBe(true);
  });

  it.each(vectors.bindingCookieValues.map((v) => [JSON.stringify(v.value), v]))(
    "value %s counts only in its form",
    (_s, v) => {
      const request = new Request(REDIRECT, { headers: { cookie: `other=1; tenant-signin=${v.value}` } });
      expect(bindingFromCookie(request, "tenant-signin")).toBe(v.valid ? v.value : undefined);
    },
  );
});
