/**
 * Every non-2xx answer comes back as `error`, an instance of the class its status calls for, with
 * status, code, parsed body and headers (credentials dropped), and never throws.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { staticToken } from "./access-token-source.js";
import { createTenantClient } from "./create-tenant-client.js";
import {
  ForbiddenError,
  HttpError,
  InsufficientScopeError,
  RateLimitError,
  ServerError,
  TenantClientError,
  UnauthorizedError,
} from "./errors.js";
import type { FetchLike } from "@tenant-integration/internal";
import { fakeFetch, json, redirect } from "./test-support/fake-fetch.js";

const baseUrl = "https://acme.tenant.example";
const TOKEN = "at_Can+ary/T0ken==";

function client(fetch: FetchLike) {
  return createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch, retry: false });
}

describe("error values of non-2xx answers", () => {
  it("401: an UnauthorizedError with status, code, body and headers", async () => {
    const fetch = fakeFetch(
      json(401, { error: "invalid_token" }, { "www-authenticate": 'Bearer error="invalid_token"' }),
    );
    const { data, error, response } = await client(fetch).GET("/api/v1/auth/user");
    expect(data).toBeUndefined();
    expect(response.status).toBe(401);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toBeInstanceOf(TenantClientError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: "UnauthorizedError",
      code: "UNAUTHORIZED",
      status: 401,
      body: { error: "invalid_token" },
    });
    expect(error?.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
    expect(error?.headers["content-type"]).toBe("application/json");
  });

  it("403: an InsufficientScopeError naming the scope, or a ForbiddenError without a challenge", async () => {
    const scoped = fakeFetch(
      json(
        403,
        { error: "insufficient_scope" },
        { "www-authenticate": 'Bearer error="insufficient_scope", scope="profile:read users:read"' },
      ),
    );
    const { error } = await client(scoped).GET("/api/v1/auth/user");
    expect(error).toBeInstanceOf(InsufficientScopeError);
    expect(error).toMatchObject({
      name: "InsufficientScopeError",
      code: "INSUFFICIENT_SCOPE",
      status: 403,
      requiredScope: ["profile:read", "users:read"],
    });
    expect(error?.message).toBe("403 Forbidden: needs profile:read or users:read");

    const plain = await client(fakeFetch(new Response("no", { status: 403 }))).GET("/api/v1/auth/user");
    expect(plain.error).toBeInstanceOf(ForbiddenError);
    expect(plain.error).not.toBeInstanceOf(InsufficientScopeError);
    expect(plain.error).toMatchObject({
      name: "ForbiddenError",
      code: "FORBIDDEN",
      status: 403,
      body: "no",
      requiredScope: [],
    });
  });

  it("429: a RateLimitError with Retry-After parsed as milliseconds, from seconds or an HTTP date", async () => {
    const seconds = await client(fakeFetch(json(429, { error: "slow_down" }, { "retry-after": "7" }))).GET(
      "/api/v1/auth/user",
    );
    expect(seconds.error).toBeInstanceOf(RateLimitError);
    expect(seconds.error).toMatchObject({
      name: "RateLimitError",
      code: "RATE_LIMITED",
      status: 429,
      body: { error: "slow_down" },
      retryAfterMs: 7_000,
    });
    expect(seconds.error?.headers["retry-after"]).toBe("7");

    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    const date = await client(fakeFetch(json(429, {}, { "retry-after": inAMinute }))).GET("/api/v1/auth/user");
    const retryAfterMs = (date.error as RateLimitError).retryAfterMs;
    // an HTTP date has whole seconds, and a loaded machine may be slow: close to 60 s, never more
    expect(retryAfterMs).toBeGreaterThan(45_000);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);

    const none = await client(fakeFetch(json(429, {}))).GET("/api/v1/auth/user");
    expect((none.error as RateLimitError).retryAfterMs).toBeUndefined();
  });

  it("5xx: a ServerError for every status from 500 to 599", async () => {
    for (const status of [500, 501, 502, 503, 504, 599]) {
      const { error } = await client(fakeFetch(json(status, { status }))).GET("/api/v1/auth/user");
      expect(error, String(status)).toBeInstanceOf(ServerError);
      expect(error, String(status)).toMatchObject({
        name: "ServerError",
        code: "SERVER_ERROR",
        status,
        body: { status },
      });
    }
  });

  it("other statuses: a plain HttpError with code HTTP_ERROR", async () => {
    for (const status of [400, 404, 409, 422]) {
      const { error } = await client(fakeFetch(json(status, { error: "x" }))).raw.GET("/api/v1/tickets");
      expect(error?.constructor, String(status)).toBe(HttpError);
      expect(error, String(status)).toMatchObject({
        name: "HttpError",
        code: "HTTP_ERROR",
        status,
        body: { error: "x" },
        message: `HTTP ${status}`,
      });
    }
  });

  it("an unfollowed redirect of an API request is an HttpError with its Location", async () => {
    const { error, response } = await client(fakeFetch(redirect(302, "https://acme.tenant.example/elsewhere"))).GET(
      "/api/v1/auth/user",
    );
    expect(response.status).toBe(302);
    expect(error).toMatchObject({ code: "HTTP_ERROR", status: 302 });
    expect(error?.headers["location"]).toBe("https://acme.tenant.example/elsewhere");
  });

  it("an answer without a body (HEAD) still gets its class, with an undefined body", async () => {
    const { error } = await client(fakeFetch(new Response(null, { status: 404 }))).raw.HEAD("/api/v1/tickets");
    expect(error).toBeInstanceOf(HttpError);
    expect(error?.status).toBe(404);
    expect(error?.body).toBeUndefined();
  });

  it("a 2xx whose body is not JSON rejects with openapi-fetch's SyntaxError (the one thrown answer, as the README table says)", async () => {
    const fetch = fakeFetch(new Response("<html>", { status: 200, headers: { "content-type": "application/json" } }));
    await expect(client(fetch).GET("/api/v1/auth/user")).rejects.toBeInstanceOf(SyntaxError);
  });

  it("an OAuth error body is kept as the contract types it", async () => {
    const fetch = fakeFetch(json(400, { error: "invalid_grant", error_description: "expired" }));
    const { error } = await client(fetch).POST("/oauth/token", {
      body: { grant_type: "refresh_token", refresh_token: "rt_1", client_id: "demo" },
    });
    expect(error).toBeInstanceOf(HttpError);
    expect(error?.body).toEqual({ error: "invalid_grant", error_description: "expired" });
  });
});

describe("no token and no credential in an error value", () => {
  it("drops authorization, cookie and set-cookie headers, and any header echoing the token", async () => {
    const fetch = fakeFetch(
      json(
        403,
        {},
        {
          "set-cookie": "session=abc",
          "proxy-authorization": "Basic eDp5",
          "x-echo": `you sent ${TOKEN}`,
          "x-echo-encoded": `t=${encodeURIComponent(TOKEN)}`,
          "x-request-id": "r-1",
        },
      ),
    );
    const { error } = await client(fetch).GET("/api/v1/auth/user");
    expect(Object.keys(error?.headers ?? {}).sort()).toEqual(["content-type", "x-request-id"]);
  });

  it("redacts the token from a body that echoes it, in any form and at any depth", async () => {
    const body = { detail: { seen: [`Bearer ${TOKEN}`, { q: `token=${encodeURIComponent(TOKEN)}` }] }, raw: TOKEN };
    const { error } = await client(fakeFetch(json(401, body))).GET("/api/v1/auth/user");
    const printed = [JSON.stringify(error), inspect(error, { depth: 20 }), String(error), error?.stack].join("\n");
    expect(printed).not.toContain(TOKEN);
    expect(printed).not.toContain(encodeURIComponent(TOKEN));
    expect(error?.body).toEqual({
      detail: { seen: ["Bearer [redacted]", { q: "token=[redacted]" }] },
      raw: "[redacted]",
    });
  });

  it("redacts both the rejected and the new token after a refresh-and-retry", async () => {
    let n = 1;
    const auth = { getAccessToken: async () => `at_${n}_Secret`, onUnauthorized: () => void n++ };
    const fetch = fakeFetch(json(401, {}), (request) =>
      json(403, { echoed: request.headers.get("authorization"), old: "at_1_Secret" }),
    );
    const { error } = await createTenantClient({ baseUrl, auth, fetch, retry: false }).GET("/api/v1/auth/user");
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error?.body).toEqual({ echoed: "Bearer [redacted]", old: "[redacted]" });
  });
});
