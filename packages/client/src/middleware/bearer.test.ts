import createClient from "openapi-fetch";
import type { paths } from "@tenant-integration/types";
import { createTokenManager } from "@tenant-integration/token-manager";
import { describe, expect, it } from "vitest";
import { staticToken } from "../access-token-source.js";
import { createTenantClient } from "../create-tenant-client.js";
import { TenantClientError } from "../errors.js";
import { fakeFetch, json, redirect } from "../test-support/fake-fetch.js";
import { bearerMiddleware } from "./bearer.js";
import type { FetchLike } from "@tenant-integration/internal";

const baseUrl = "https://acme.tenant.example";
const TOKEN = "at_2YotnFZFEjr1zCsicMWpAA";

function plainClient(fetch: FetchLike) {
  const client = createClient<paths>({ baseUrl, fetch });
  client.use(bearerMiddleware({ baseUrl, auth: staticToken(TOKEN) }));
  return client;
}

describe("bearerMiddleware on a plain openapi-fetch client", () => {
  it("adds Authorization: Bearer to a request for /api/v1 of the tenant", async () => {
    const fetch = fakeFetch(json(200, { id: 1 }));
    const { data } = await plainClient(fetch).GET("/api/v1/auth/user");
    expect(data).toEqual({ id: 1 });
    expect(fetch.calls[0]?.headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
  });

  it("sends the token request with redirect manual so no redirect can carry it", async () => {
    const fetch = fakeFetch(json(200, {}));
    await plainClient(fetch).GET("/api/v1/auth/user");
    expect(fetch.calls[0]?.redirect).toBe("manual");
  });

  it("adds no header to /oauth/token", async () => {
    const fetch = fakeFetch(json(200, {}));
    await plainClient(fetch).POST("/oauth/token", {
      body: { grant_type: "refresh_token", refresh_token: "rt_x", client_id: "demo" },
    });
    expect(fetch.calls[0]?.headers.has("authorization")).toBe(false);
  });

  it("adds no header to /oauth/revoke nor /oauth/authorize", async () => {
    const fetch = fakeFetch(json(200, {}));
    const client = plainClient(fetch);
    await client.POST("/oauth/revoke", { body: { token: "at_x", client_id: "demo" } });
    await client.GET("/oauth/authorize", {
      params: {
        query: {
          response_type: "code",
          client_id: "demo",
          redirect_uri: "https://app.example/cb",
          state: "s",
          code_challenge: "c",
          code_challenge_method: "S256",
        },
      },
    });
    expect(fetch.calls.map((c) => c.headers.has("authorization"))).toEqual([false, false]);
  });

  it("adds no header to another origin given as an absolute base URL", async () => {
    const fetch = fakeFetch(json(200, {}));
    await plainClient(fetch).GET("/api/v1/auth/user", { baseUrl: "https://evil.example" });
    expect(fetch.calls[0]?.url).toBe("https://evil.example/api/v1/auth/user");
    expect(fetch.calls[0]?.headers.has("authorization")).toBe(false);
  });

  it("adds no header to a look-alike host that starts with the tenant's name", async () => {
    const fetch = fakeFetch(json(200, {}));
    await plainClient(fetch).GET("/api/v1/auth/user", { baseUrl: "https://acme.tenant.example.evil.example" });
    expect(fetch.calls[0]?.headers.has("authorization")).toBe(false);
  });

  it("adds no header to a path that leaves /api/v1 through dot segments", async () => {
    const fetch = fakeFetch(json(200, {}));
    await plainClient(fetch).GET("/api/v1/../../oauth/token" as "/api/v1/auth/user");
    expect(fetch.calls[0]?.url).toBe(`${baseUrl}/oauth/token`);
    expect(fetch.calls[0]?.headers.has("authorization")).toBe(false);
  });

  it("adds no header to /api/v10 (a prefix that is not a path segment)", async () => {
    const fetch = fakeFetch(json(200, {}));
    await plainClient(fetch).GET("/api/v10/x" as "/api/v1/auth/user");
    expect(fetch.calls[0]?.headers.has("authorization")).toBe(false);
  });

  it("does not ask the strategy for a token when the request needs none", async () => {
    let asked = 0;
    const client = createClient<paths>({ baseUrl, fetch: fakeFetch(json(200, {})) });
    client.use(bearerMiddleware({ baseUrl, auth: { getAccessToken: async () => (asked++, TOKEN) } }));
    await client.POST("/oauth/revoke", { body: { token: "at_x", client_id: "demo" } });
    expect(asked).toBe(0);
  });

  it("returns a same-origin redirect unfollowed, so the token is sent exactly once", async () => {
    const fetch = fakeFetch(redirect(302, "/api/v1/users/me"), json(200, { id: 7 }));
    const { response } = await plainClient(fetch).GET("/api/v1/auth/user");
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/api/v1/users/me");
    expect(fetch.calls).toHaveLength(1);
  });

  it("does not follow a redirect to another origin: the 3xx comes back and the other origin sees nothing", async () => {
    const fetch = fakeFetch(redirect(302, "https://evil.example/steal"), json(200, {}));
    const { response } = await plainClient(fetch).GET("/api/v1/auth/user");
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("https://evil.example/steal");
    expect(fetch.calls).toHaveLength(1);
  });

  it("sends a POST body with the token in manual mode", async () => {
    const fetch = fakeFetch(json(201, {}));
    const raw = createClient<Record<string, never>>({ baseUrl, fetch });
    raw.use(bearerMiddleware({ baseUrl, auth: staticToken(TOKEN) }));
    await (raw as unknown as { POST(u: string, i: unknown): Promise<unknown> }).POST("/api/v1/a", { body: { n: 1 } });
    expect(fetch.calls.map((c) => [c.method, c.body, c.redirect, c.headers.get("authorization")])).toEqual([
      ["POST", '{"n":1}', "manual", `Bearer ${TOKEN}`],
    ]);
  });

  it("leaves a 3xx unfollowed when the caller asked for redirect manual", async () => {
    const fetch = fakeFetch(redirect(302, "/api/v1/elsewhere"), json(200, {}));
    const { response } = await plainClient(fetch).GET("/api/v1/auth/user", { redirect: "manual" });
    expect(response.status).toBe(302);
    expect(fetch.calls).toHaveLength(1);
  });

  it("refuses a token outside the b64token syntax without sending it or echoing it", async () => {
    const fetch = fakeFetch(json(200, {}));
    const client = createClient<paths>({ baseUrl, fetch });
    client.use(bearerMiddleware({ baseUrl, auth: staticToken("bad token\r\nX-Injected: 1") }));
    const failure = await client.GET("/api/v1/auth/user").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TenantClientError);
    expect((failure as TenantClientError).code).toBe("INVALID_TOKEN");
    expect(String(failure)).not.toContain("bad token");
    expect(fetch.calls).toHaveLength(0);
  });

  it("refuses a plain-http base URL that is not loopback", () => {
    expect(() => bearerMiddleware({ baseUrl: "http://acme.tenant.example", auth: staticToken(TOKEN) })).toThrow(
      TenantClientError,
    );
  });
});

describe("bearer rules through createTenantClient", () => {
  it("sends the token to /api/v1 of the tenant in manual redirect mode, from the first Request", async () => {
    const fetch = fakeFetch(json(200, { id: 1 }));
    const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch });
    await client.GET("/api/v1/auth/user");
    expect(fetch.calls[0]?.headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
    expect(fetch.calls[0]?.redirect).toBe("manual");
  });

  it("sends no token to an absolute URL of another origin", async () => {
    const fetch = fakeFetch(json(200, {}));
    const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch });
    await client.GET("/api/v1/auth/user", { baseUrl: "https://evil.example" });
    expect(fetch.calls[0]?.headers.has("authorization")).toBe(false);
  });

  it("does not carry the token across a redirect to another origin", async () => {
    const fetch = fakeFetch(redirect(301, "https://evil.example/api/v1/auth/user"), json(200, {}));
    const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch });
    const { response } = await client.GET("/api/v1/auth/user");
    expect(response.status).toBe(301);
    expect(fetch.calls.filter((c) => c.url.startsWith("https://evil.example"))).toHaveLength(0);
  });

  it("returns a same-origin redirect of an API request unfollowed", async () => {
    const fetch = fakeFetch(redirect(307, "/api/v1/elsewhere"), json(200, {}));
    const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch });
    const { response } = await client.GET("/api/v1/auth/user");
    expect(response.status).toBe(307);
    expect(fetch.calls).toHaveLength(1);
  });

  it("judges the URL a call's own middleware leaves: a request it sends elsewhere gets no token", async () => {
    const fetch = fakeFetch(json(200, {}));
    const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch });
    const elsewhere = {
      onRequest: ({ request }: { request: Request }) => new Request("https://elsewhere.example/x", request),
    };
    await client.GET("/api/v1/auth/user", { middleware: [elsewhere] });
    expect(fetch.calls[0]?.url).toBe("https://elsewhere.example/x");
    expect(fetch.calls[0]?.headers.has("authorization")).toBe(false);
  });

  it("sends OAuth requests, which carry no bearer token but a token in their body, without following redirects either", async () => {
    const fetch = fakeFetch(json(307, {}, { location: "https://elsewhere.example/revoke" }));
    const client = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch });
    const { error } = await client.POST("/oauth/revoke", { body: { token: "at_x", client_id: "demo" } });
    expect(fetch.calls).toHaveLength(1);
    expect(fetch.calls[0]?.redirect).toBe("manual");
    expect(fetch.calls[0]?.headers.has("authorization")).toBe(false);
    expect(error).toMatchObject({ status: 307, headers: { location: "https://elsewhere.example/revoke" } });
  });
});

describe("bearerMiddleware with the token manager (issue 28: the per-call cost of an async strategy)", () => {
  const REDIRECT = "http://127.0.0.1:53682/callback";

  /** A token manager signed in on a stub token endpoint (at_1, then at_2 on the first refresh), with a clock the test moves. */
  async function signedInManager() {
    let now = 1_700_000_000_000;
    let issued = 0;
    const tokenEndpoint = async () =>
      json(200, {
        access_token: `at_${++issued}`,
        refresh_token: `rt_${issued}`,
        token_type: "Bearer",
        expires_in: 900,
      });
    const manager = createTokenManager({
      baseUrl,
      clientId: "demo",
      redirectUri: REDIRECT,
      scopes: ["profile:read"],
      fetch: tokenEndpoint,
      now: () => now,
    });
    const { url } = await manager.beginAuthorization();
    await manager.completeAuthorization(`${REDIRECT}?code=c&state=${new URL(url).searchParams.get("state")}`);
    return { manager, advance: (ms: number) => void (now += ms) };
  }

  /** What the middleware's onRequest returns for one GET of the user: a Request or undefined when it added the header synchronously, a promise when it awaited the strategy. */
  function onRequest(middleware: ReturnType<typeof bearerMiddleware>, request: Request) {
    const params = { request, options: {}, schemaPath: "/api/v1/auth/user", params: {}, id: "1" };
    return middleware.onRequest!(params as unknown as Parameters<NonNullable<typeof middleware.onRequest>>[0]);
  }

  it("adds a fresh token without awaiting once it has seen the manager's promise resolve, and awaits the refreshed one", async () => {
    const { manager, advance } = await signedInManager();
    const middleware = bearerMiddleware({ baseUrl, auth: manager });
    const request = () => new Request(`${baseUrl}/api/v1/auth/user`, { redirect: "manual" });

    const first = request();
    const awaited = onRequest(middleware, first);
    expect(awaited).toBeInstanceOf(Promise);
    await awaited;
    expect(first.headers.get("authorization")).toBe("Bearer at_1");

    const second = request();
    expect(onRequest(middleware, second)).not.toBeInstanceOf(Promise);
    expect(second.headers.get("authorization")).toBe("Bearer at_1");

    // within the refresh leeway: the manager refreshes, the middleware awaits the new token
    advance(900_000 - 60_000);
    const third = request();
    const refreshed = onRequest(middleware, third);
    expect(refreshed).toBeInstanceOf(Promise);
    await refreshed;
    expect(third.headers.get("authorization")).toBe("Bearer at_2");
  });
});
