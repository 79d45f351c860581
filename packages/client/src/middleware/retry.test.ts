import createClient from "openapi-fetch";
import type { paths } from "@tenant-integration/types";
import { describe, expect, it } from "vitest";
import { staticToken } from "../access-token-source.js";
import { createTenantClient, type TenantClientOptions } from "../create-tenant-client.js";
import { ServerError } from "../errors.js";
import { fakeFetch, json } from "../test-support/fake-fetch.js";
import { retryMiddleware, retryPolicy, type RetryOptions } from "./retry.js";
import type { FetchLike } from "@tenant-integration/internal";

const baseUrl = "https://acme.tenant.example";
const NOW = Date.UTC(2025, 0, 1, 12, 0, 0);

/** Retry options with a recording sleep, a fixed clock and a fixed random number. */
function clock(extra: RetryOptions = {}) {
  const slept: number[] = [];
  const options: RetryOptions = {
    sleep: async (ms) => {
      slept.push(ms);
    },
    now: () => NOW,
    random: () => 0.5,
    ...extra,
  };
  return { slept, options };
}

function client(fetch: FetchLike, retry: RetryOptions | false) {
  return createTenantClient({
    baseUrl,
    auth: staticToken("at_1"),
    fetch,
    retry: retry === false ? false : retryPolicy(retry),
  });
}

describe("retryMiddleware", () => {
  it("retries a GET after a 429 and waits the Retry-After seconds", async () => {
    const { slept, options } = clock();
    const fetch = fakeFetch(json(429, {}, { "retry-after": "3" }), json(200, { id: 1 }));
    const { data } = await client(fetch, options).GET("/api/v1/auth/user");
    expect(data).toEqual({ id: 1 });
    expect(slept).toEqual([3000]);
    expect(fetch.calls).toHaveLength(2);
    expect(fetch.calls[1]?.headers.get("authorization")).toBe("Bearer at_1");
  });

  it("retries a GET after a 503 and honours a Retry-After HTTP date", async () => {
    const { slept, options } = clock();
    const at = new Date(NOW + 5000).toUTCString();
    const fetch = fakeFetch(json(503, {}, { "retry-after": at }), json(200, {}));
    const { response } = await client(fetch, options).GET("/api/v1/auth/user");
    expect(response.status).toBe(200);
    expect(slept).toEqual([5000]);
  });

  it("backs off exponentially with jitter within the cap when there is no Retry-After", async () => {
    const { slept, options } = clock({ retries: 4, baseDelayMs: 100, maxDelayMs: 500 });
    const fetch = fakeFetch(json(503, {}), json(503, {}), json(503, {}), json(503, {}), json(200, {}));
    await client(fetch, options).GET("/api/v1/auth/user");
    // d = min(500, 100·2^n): 100, 200, 400, 500; wait = d/2 + 0.5·d/2
    expect(slept).toEqual([75, 150, 300, 375]);
  });

  it("stops after `retries` attempts and returns the last response", async () => {
    const { options } = clock({ retries: 2 });
    const fetch = fakeFetch(json(503, { n: 1 }), json(503, { n: 2 }), json(503, { n: 3 }), json(200, {}));
    const { error, response } = await client(fetch, options).GET("/api/v1/auth/user");
    expect(response.status).toBe(503);
    expect(error).toBeInstanceOf(ServerError);
    expect(error?.body).toEqual({ n: 3 });
    expect(fetch.calls).toHaveLength(3);
  });

  it("does not retry a POST", async () => {
    const { slept, options } = clock();
    const fetch = fakeFetch(json(503, {}), json(200, {}));
    const { response } = await client(fetch, options).raw.POST("/api/v1/contacts", { body: { name: "Ada" } });
    expect(response.status).toBe(503);
    expect(fetch.calls).toHaveLength(1);
    expect(slept).toEqual([]);
  });

  it("retries a PUT with the same body", async () => {
    const { options } = clock();
    const fetch = fakeFetch(json(502, {}), json(200, {}));
    await client(fetch, options).raw.PUT("/api/v1/contacts/1", { body: { name: "Ada" } });
    expect(fetch.calls.map((c) => c.body)).toEqual(['{"name":"Ada"}', '{"name":"Ada"}']);
  });

  it("does not retry 501 Not Implemented", async () => {
    const { options } = clock();
    const fetch = fakeFetch(json(501, {}), json(200, {}));
    const { response } = await client(fetch, options).GET("/api/v1/auth/user");
    expect(response.status).toBe(501);
  });

  it("gives up when Retry-After asks for longer than maxDelayMs", async () => {
    const { slept, options } = clock({ maxDelayMs: 2000 });
    const fetch = fakeFetch(json(429, {}, { "retry-after": "60" }), json(200, {}));
    const { response } = await client(fetch, options).GET("/api/v1/auth/user");
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("60");
    expect(slept).toEqual([]);
  });

  it("sends nothing more without a retry policy: retries are opt-in (issue 20: an app without them ships no retry code)", async () => {
    const fetch = fakeFetch(json(503, {}), json(200, {}));
    const { response } = await createTenantClient({ baseUrl, auth: staticToken("at_1"), fetch }).GET(
      "/api/v1/auth/user",
    );
    expect(response.status).toBe(503);
    expect(fetch.calls).toHaveLength(1);
  });

  it("takes only a policy made by retryPolicy (types)", () => {
    // @ts-expect-error -- retry options go through retryPolicy({ … })
    const options: TenantClientOptions = { baseUrl, auth: staticToken("at_1"), retry: { retries: 3 } };
    expect(options.retry).toEqual({ retries: 3 });
  });

  it("sends nothing more when retry is false", async () => {
    const fetch = fakeFetch(json(503, {}), json(200, {}));
    const { response } = await client(fetch, false).GET("/api/v1/auth/user");
    expect(response.status).toBe(503);
    expect(fetch.calls).toHaveLength(1);
  });

  it("sends nothing more when retries is 0", async () => {
    const { options } = clock({ retries: 0 });
    const fetch = fakeFetch(json(503, {}), json(200, {}));
    const { response } = await client(fetch, options).GET("/api/v1/auth/user");
    expect(response.status).toBe(503);
  });

  it("stops waiting and returns the last response when the request is aborted", async () => {
    const controller = new AbortController();
    const { options } = clock({
      sleep: async () => {
        controller.abort();
      },
    });
    const fetch = fakeFetch(json(503, { n: 1 }), json(200, {}));
    const { response, error } = await client(fetch, options).GET("/api/v1/auth/user", { signal: controller.signal });
    expect(response.status).toBe(503);
    expect(error).toBeInstanceOf(ServerError);
    expect(error?.body).toEqual({ n: 1 });
    expect(fetch.calls).toHaveLength(1);
  });

  it("works on a plain openapi-fetch client without auth", async () => {
    const { slept, options } = clock();
    const fetch = fakeFetch(json(429, {}, { "retry-after": "1" }), json(200, { ok: true }));
    const plain = createClient<paths>({ baseUrl, fetch });
    plain.use(retryMiddleware(options));
    const { data } = await plain.GET("/api/v1/auth/user");
    expect(data).toEqual({ ok: true });
    expect(slept).toEqual([1000]);
  });

  it("lets a 401 on a retried request still get the one refresh-and-retry", async () => {
    const { options } = clock();
    let n = 1;
    const auth = { getAccessToken: async () => `at_${n}`, onUnauthorized: () => void n++ };
    const fetch = fakeFetch(json(503, {}), json(401, {}), json(200, { id: 1 }));
    const c = createTenantClient({ baseUrl, auth, fetch, retry: retryPolicy(options) });
    const { data } = await c.GET("/api/v1/auth/user");
    expect(data).toEqual({ id: 1 });
    expect(fetch.calls.map((x) => x.headers.get("authorization"))).toEqual([
      "Bearer at_1",
      "Bearer at_1",
      "Bearer at_2",
    ]);
  });
});
