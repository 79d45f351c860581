import { inspect } from "node:util";
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import { staticToken } from "./access-token-source.js";
import { createTenantClient } from "./create-tenant-client.js";
import {
  ForbiddenError,
  HttpError,
  InsufficientScopeError,
  NetworkError,
  PathOutsideApiError,
  TenantClientError,
} from "./errors.js";
import { fakeFetch, json } from "./test-support/fake-fetch.js";
import type { FetchLike } from "@tenant-integration/internal";
import type { Middleware } from "openapi-fetch";

const baseUrl = "https://acme.tenant.example";
const TOKEN = "at_S3cr3tT0k3nValue";

function client(fetch: FetchLike) {
  return createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch, retry: false });
}

/** Everything a careless logger could print about a value. */
function everyRendering(value: unknown): string {
  const e = value as { message?: unknown; stack?: unknown; cause?: unknown };
  return [
    String(value),
    JSON.stringify(value),
    inspect(value, { depth: 10 }),
    e.message,
    e.stack,
    inspect(e.cause, { depth: 10 }),
    JSON.stringify(e.cause),
  ].join("\n");
}

describe("403 as a typed error value", () => {
  it("returns an InsufficientScopeError naming the required scope, with the body", async () => {
    const fetch = fakeFetch(
      json(
        403,
        { error: "insufficient_scope" },
        { "www-authenticate": 'Bearer error="insufficient_scope", scope="profile:read"' },
      ),
    );
    const { data, error, response } = await client(fetch).GET("/api/v1/auth/user");
    expect(data).toBeUndefined();
    expect(response.status).toBe(403);
    expect(error).toBeInstanceOf(InsufficientScopeError);
    expect(error).toBeInstanceOf(ForbiddenError);
    if (!(error instanceof ForbiddenError)) throw new Error("expected a ForbiddenError");
    expectTypeOf(error.status).toEqualTypeOf<number>();
    expect(error.status).toBe(403);
    expect(error.code).toBe("INSUFFICIENT_SCOPE");
    expect(error.name).toBe("InsufficientScopeError");
    expect(error.requiredScope).toEqual(["profile:read"]);
    expect(error.body).toEqual({ error: "insufficient_scope" });
  });

  it("returns a plain ForbiddenError with an empty scope list when the server names none", async () => {
    const fetch = fakeFetch(new Response("nope", { status: 403 }));
    const { error } = await client(fetch).GET("/api/v1/auth/user");
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).not.toBeInstanceOf(InsufficientScopeError);
    expect((error as ForbiddenError).requiredScope).toEqual([]);
    expect((error as ForbiddenError).body).toBe("nope");
    expect((error as ForbiddenError).code).toBe("FORBIDDEN");
  });

  it("returns the same error value from the escape hatch", async () => {
    const fetch = fakeFetch(
      json(403, {}, { "www-authenticate": 'Bearer error="insufficient_scope", scope="tickets:read"' }),
    );
    const { error } = await client(fetch).raw.GET("/api/v1/tickets");
    expect((error as ForbiddenError).requiredScope).toEqual(["tickets:read"]);
  });

  it("returns other error statuses as a plain HttpError with the parsed body", async () => {
    const fetch = fakeFetch(json(404, { error: "not_found" }));
    const { error } = await client(fetch).raw.GET("/api/v1/tickets/1");
    expect(error).toBeInstanceOf(HttpError);
    expect(error?.constructor).toBe(HttpError);
    expect(error?.body).toEqual({ error: "not_found" });
  });
});

describe("the escape hatch: client.raw", () => {
  it("calls an /api/v1 route the contract does not list, with the token", async () => {
    const fetch = fakeFetch(json(200, [{ id: 1 }]));
    const { data } = await client(fetch).raw.GET("/api/v1/tickets", { params: { query: { page: 2 } } });
    expect(data).toEqual([{ id: 1 }]);
    expect(fetch.calls[0]?.url).toBe(`${baseUrl}/api/v1/tickets?page=2`);
    expect(fetch.calls[0]?.headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
  });

  it("substitutes path parameters", async () => {
    const fetch = fakeFetch(json(200, {}));
    await client(fetch).raw.DELETE("/api/v1/tickets/{id}", { params: { path: { id: "t 1" } } });
    expect(fetch.calls[0]?.url).toBe(`${baseUrl}/api/v1/tickets/t%201`);
    expect(fetch.calls[0]?.method).toBe("DELETE");
  });

  it("refuses an OAuth path without sending anything", async () => {
    const fetch = fakeFetch(json(200, {}));
    await expect(client(fetch).raw.POST("/oauth/token" as "/api/v1/x", { body: {} })).rejects.toBeInstanceOf(
      PathOutsideApiError,
    );
    expect(fetch.calls).toHaveLength(0);
  });

  it("refuses a path that leaves /api/v1 through dot segments or a path parameter", async () => {
    const fetch = fakeFetch(json(200, {}));
    const c = client(fetch);
    await expect(c.raw.GET("/api/v1/../../oauth/revoke")).rejects.toBeInstanceOf(PathOutsideApiError);
    await expect(c.raw.GET("/api/v1/{id}", { params: { path: { id: ".." } } })).rejects.toBeInstanceOf(
      PathOutsideApiError,
    );
    expect(fetch.calls).toHaveLength(0);
  });

  it("refuses another origin given as a per-request base URL", async () => {
    const fetch = fakeFetch(json(200, {}));
    const failure = await client(fetch)
      .raw.GET("/api/v1/tickets", { baseUrl: "https://evil.example" })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PathOutsideApiError);
    expect((failure as PathOutsideApiError).code).toBe("PATH_OUTSIDE_API");
    expect(fetch.calls).toHaveLength(0);
  });

  it("refuses /api/v10, which only looks like /api/v1", async () => {
    const fetch = fakeFetch(json(200, {}));
    await expect(client(fetch).raw.GET("/api/v10" as "/api/v1/x")).rejects.toBeInstanceOf(PathOutsideApiError);
  });
});

describe("network failures", () => {
  it("throw a NetworkError with code NETWORK_ERROR and the cause", async () => {
    const cause = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    const failure = await client(fakeFetch(cause))
      .GET("/api/v1/auth/user")
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(failure).toBeInstanceOf(TenantClientError);
    const error = failure as NetworkError;
    expect(error.name).toBe("NetworkError");
    expect(error.code).toBe("NETWORK_ERROR");
    expect(error.cause).toBe(cause);
    expect(error.method).toBe("GET");
    expect(error.url).toBe(`${baseUrl}/api/v1/auth/user`);
  });

  it("say ABORTED when the request's signal was aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const abort = new DOMException("This operation was aborted", "AbortError");
    const failure = await client(fakeFetch(abort))
      .GET("/api/v1/auth/user", { signal: controller.signal })
      .catch((e: unknown) => e);
    expect((failure as NetworkError).code).toBe("ABORTED");
  });

  it("say TIMEOUT for a TimeoutError", async () => {
    const failure = await client(fakeFetch(new DOMException("timed out", "TimeoutError")))
      .GET("/api/v1/auth/user")
      .catch((e: unknown) => e);
    expect((failure as NetworkError).code).toBe("TIMEOUT");
  });

  it("are typed when a retry fails to send, too", async () => {
    let n = 1;
    const auth = { getAccessToken: async () => `at_${n}`, onUnauthorized: () => void n++ };
    const fetch = fakeFetch(json(401, {}), new TypeError("fetch failed"));
    const failure = await createTenantClient({ baseUrl, auth, fetch })
      .GET("/api/v1/auth/user")
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NetworkError);
  });
});

describe("no token in any error", () => {
  it("redacts a token that a failing fetch put in its error", async () => {
    const leaky = new Error(`connect failed for Authorization: Bearer ${TOKEN}`);
    const failure = await client(fakeFetch(leaky))
      .GET("/api/v1/auth/user")
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(everyRendering(failure)).not.toContain(TOKEN);
    expect((failure as NetworkError).cause).toBeInstanceOf(Error);
    expect(((failure as NetworkError).cause as Error).message).toBe(
      "connect failed for Authorization: Bearer [redacted]",
    );
  });

  it("keeps a cause that does not mention the token unchanged", async () => {
    const cause = new TypeError("fetch failed");
    const failure = await client(fakeFetch(cause))
      .GET("/api/v1/auth/user")
      .catch((e: unknown) => e);
    expect((failure as NetworkError).cause).toBe(cause);
  });

  it("keeps the token out of a ForbiddenError", async () => {
    const fetch = fakeFetch(
      json(403, { seen: "x" }, { "www-authenticate": 'Bearer error="insufficient_scope", scope="profile:read"' }),
    );
    const { error } = await client(fetch).GET("/api/v1/auth/user");
    expect(everyRendering(error)).not.toContain(TOKEN);
  });

  it("refuses a token outside b64token with INVALID_TOKEN, without echoing it", async () => {
    const bad = `${TOKEN} \n`;
    const failure = await createTenantClient({ baseUrl, auth: staticToken(bad), fetch: fakeFetch(json(200, {})) })
      .GET("/api/v1/auth/user")
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TenantClientError);
    expect((failure as TenantClientError).code).toBe("INVALID_TOKEN");
    expect(everyRendering(failure)).not.toContain(TOKEN);
  });

  it("checks every new token the strategy gives, not only the first: a malformed or empty one after a valid one is refused, nothing sent", async () => {
    const tokens = [TOKEN, `${TOKEN} \n`, TOKEN, "", undefined];
    const fetch = fakeFetch(json(200, {}), json(200, {}));
    const auth = { getAccessToken: async () => tokens.shift() as string };
    const tenant = createTenantClient({ baseUrl, auth, fetch });
    const codes: unknown[] = [];
    for (let call = 0; call < 5; call++) {
      codes.push(
        await tenant.GET("/api/v1/auth/user").then(
          ({ response }) => response.status,
          (e: TenantClientError) => e.code,
        ),
      );
    }
    expect(codes).toEqual([200, "INVALID_TOKEN", 200, "INVALID_TOKEN", "INVALID_TOKEN"]);
    expect(fetch.calls).toHaveLength(2);
  });

  it("refuses an empty token from a strategy's first answer", async () => {
    const fetch = fakeFetch(json(200, {}));
    const failure = await createTenantClient({ baseUrl, auth: { getAccessToken: async () => "" }, fetch })
      .GET("/api/v1/auth/user")
      .catch((e: unknown) => e);
    expect((failure as TenantClientError).code).toBe("INVALID_TOKEN");
    expect(fetch.calls).toHaveLength(0);
  });

  it("keeps the token out of a PathOutsideApiError and its URL out of the query", async () => {
    const failure = await client(fakeFetch(json(200, {})))
      .raw.GET("/api/v1/../x", { params: { query: { token: TOKEN } } })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PathOutsideApiError);
    expect(everyRendering(failure)).not.toContain(TOKEN);
  });

  it("cannot print the token of a staticToken strategy", async () => {
    const auth = staticToken(TOKEN);
    expect(everyRendering(auth)).not.toContain(TOKEN);
    expect(await auth.getAccessToken()).toBe(TOKEN);
  });
});

describe("createTenantClient options", () => {
  it("sends Accept: application/json by default and merges extra headers", async () => {
    const fetch = fakeFetch(json(200, {}));
    await createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch, headers: { "X-Integration": "demo" } }).GET(
      "/api/v1/auth/user",
    );
    expect(fetch.calls[0]?.headers.get("accept")).toBe("application/json");
    expect(fetch.calls[0]?.headers.get("x-integration")).toBe("demo");
  });

  it("runs extra middleware before the built-ins, so they see its changes", async () => {
    const fetch = fakeFetch(json(200, {}));
    const seen: string[] = [];
    const c = createTenantClient({
      baseUrl,
      auth: staticToken(TOKEN),
      fetch,
      middleware: [{ onRequest: ({ request }) => void seen.push(String(request.headers.has("authorization"))) }],
    });
    c.use({ onResponse: ({ response }) => void seen.push(`status ${response.status}`) });
    await c.GET("/api/v1/auth/user");
    expect(seen).toEqual(["false", "status 200"]);
    expect(fetch.calls[0]?.headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
  });

  it("runs middleware added with use() before the built-in one on requests (regression: the TSDoc said after)", async () => {
    const fetch = fakeFetch(json(200, {}));
    const sawToken: boolean[] = [];
    const c = client(fetch);
    c.use({ onRequest: ({ request }) => void sawToken.push(request.headers.has("authorization")) });
    await c.GET("/api/v1/auth/user");
    expect(sawToken).toEqual([false]);
    expect(fetch.calls[0]?.headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
  });

  it("runs, on every request, the client's middleware, then the call's own, then the built-in one, whether or not a call brings its own", async () => {
    const fetch = fakeFetch(json(200, {}));
    const order: string[] = [];
    const step = (name: string): Middleware => ({
      onRequest: ({ request }) => void order.push(`${name}${request.headers.has("authorization") ? " (token)" : ""}`),
    });
    const c = createTenantClient({ baseUrl, auth: staticToken(TOKEN), fetch, middleware: [step("options")] });
    c.use(step("use"));
    await c.GET("/api/v1/auth/user");
    await c.GET("/api/v1/auth/user", { middleware: [step("call")] });
    await c.raw.GET("/api/v1/x", { middleware: [step("raw call")] });
    c.use(step("later use"));
    await c.GET("/api/v1/auth/user");
    expect(order).toEqual([
      "options",
      "use",
      "options",
      "use",
      "call",
      "options",
      "use",
      "raw call",
      "options",
      "use",
      "later use",
    ]);
    expect(fetch.calls.map((x) => x.headers.get("authorization"))).toEqual(Array(4).fill(`Bearer ${TOKEN}`));
  });

  it("ejects middleware added with use, from calls with and without their own middleware", async () => {
    const fetch = fakeFetch(json(200, {}));
    const seen: number[] = [];
    const c = client(fetch);
    const m = { onResponse: () => void seen.push(1) };
    c.use(m);
    await c.GET("/api/v1/auth/user");
    await c.GET("/api/v1/auth/user", { middleware: [{ onRequest: () => undefined }] });
    c.eject(m);
    await c.GET("/api/v1/auth/user");
    await c.GET("/api/v1/auth/user", { middleware: [{ onRequest: () => undefined }] });
    expect(seen).toEqual([1, 1]);
  });

  it("hands every failed send to the caller's onError, after the client made it typed: the network, the token source, raw's refusal", async () => {
    const seen: unknown[] = [];
    const watching: Middleware = { onError: ({ error }) => void seen.push(error) };
    const failing = createTenantClient({
      baseUrl,
      auth: staticToken(TOKEN),
      fetch: fakeFetch(new TypeError("connection refused")),
      middleware: [watching],
    });
    await failing.GET("/api/v1/auth/user").catch(() => undefined);
    class LoginRequired extends Error {}
    const signedOut = createTenantClient({
      baseUrl,
      auth: { getAccessToken: () => Promise.reject(new LoginRequired("log in")) },
      fetch: fakeFetch(json(200, {})),
    });
    signedOut.use(watching);
    await signedOut.GET("/api/v1/auth/user").catch(() => undefined);
    await failing.raw.GET("/api/v1/../oauth/token" as "/api/v1/x").catch(() => undefined);
    expect(seen).toEqual([expect.any(NetworkError), expect.any(LoginRequired), expect.any(PathOutsideApiError)]);
  });

  it("lets the caller's onError answer in the client's place, as with any openapi-fetch fetch", async () => {
    const c = createTenantClient({
      baseUrl,
      auth: staticToken(TOKEN),
      fetch: fakeFetch(new TypeError("offline")),
      middleware: [{ onError: () => new Response(JSON.stringify({ cached: true }), { status: 200 }) }],
    });
    const { data } = await c.GET("/api/v1/auth/user");
    expect(data).toEqual({ cached: true });
  });

  it("asks the strategy for a token on every API request", async () => {
    let n = 0;
    const fetch = fakeFetch(json(200, {}));
    const c = createTenantClient({ baseUrl, auth: { getAccessToken: async () => `at_${++n}` }, fetch });
    await c.GET("/api/v1/auth/user");
    await c.GET("/api/v1/auth/user");
    expect(fetch.calls.map((x) => x.headers.get("authorization"))).toEqual(["Bearer at_1", "Bearer at_2"]);
  });

  it("sends each call the token its own getAccessToken() gave, when two calls' tokens arrive in the other order", async () => {
    const resolvers: ((token: string) => void)[] = [];
    const auth = { getAccessToken: () => new Promise<string>((resolve) => resolvers.push(resolve)) };
    const fetch = fakeFetch(json(200, {}));
    const c = createTenantClient({ baseUrl, auth, fetch });
    const first = c.GET("/api/v1/auth/user", { headers: { "x-call": "first" } });
    const second = c.GET("/api/v1/auth/user", { headers: { "x-call": "second" } });
    await vi.waitFor(() => expect(resolvers).toHaveLength(2));
    // the second call's token is checked first, then the first call's, before either request leaves
    resolvers[1]!("at_second");
    resolvers[0]!("at_first");
    await Promise.all([first, second]);
    const sent = Object.fromEntries(fetch.calls.map((x) => [x.headers.get("x-call"), x.headers.get("authorization")]));
    expect(sent).toEqual({ first: "Bearer at_first", second: "Bearer at_second" });
  });

  it("refuses an empty staticToken with INVALID_OPTIONS", () => {
    expect(() => staticToken("")).toThrow(
      expect.objectContaining({ name: "TenantClientError", code: "INVALID_OPTIONS" }),
    );
  });

  it("refuses an auth option without getAccessToken", () => {
    expect(() => createTenantClient({ baseUrl, auth: {} as never })).toThrow(
      expect.objectContaining({ name: "TenantClientError", code: "INVALID_OPTIONS" }),
    );
  });

  it("passes strategy errors to the caller unchanged", async () => {
    class LoginRequired extends Error {}
    const failure = await createTenantClient({
      baseUrl,
      auth: { getAccessToken: () => Promise.reject(new LoginRequired("log in")) },
      fetch: fakeFetch(json(200, {})),
    })
      .GET("/api/v1/auth/user")
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LoginRequired);
  });
});
