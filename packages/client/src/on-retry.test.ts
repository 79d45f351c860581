import { inspect } from "node:util";
/**
 * Regression guard: user middleware cannot see retries (three attempts went out on the wire, the
 * middleware saw one response). `onRetry` is told about every retry, so metrics can count attempts.
 */
import createClient from "openapi-fetch";
import type { paths } from "@tenant-integration/types";
import { describe, expect, it } from "vitest";
import { staticToken } from "./access-token-source.js";
import { createTenantClient } from "./create-tenant-client.js";
import { NetworkError } from "./errors.js";
import { retryMiddleware, retryPolicy, type RetryInfo } from "./middleware/retry.js";
import { fakeFetch, json } from "./test-support/fake-fetch.js";

const baseUrl = "https://acme.tenant.example";
const noWait = { sleep: async () => undefined, random: () => 0.5, baseDelayMs: 100 };

describe("onRetry", () => {
  it("is called once per retry, with attempt, status, delay, method and path (never the token), while middleware sees one response", async () => {
    const infos: RetryInfo[] = [];
    const seenByMiddleware: number[] = [];
    const fetch = fakeFetch(json(503, {}), json(429, {}, { "retry-after": "1" }), json(200, { ok: true }));
    const client = createTenantClient({
      baseUrl,
      auth: staticToken("at_1"),
      fetch,
      retry: retryPolicy(noWait),
      onRetry: (info) => void infos.push(info),
      middleware: [{ onResponse: ({ response }) => void seenByMiddleware.push(response.status) }],
    });
    const { data } = await client.GET("/api/v1/auth/user");
    expect(data).toEqual({ ok: true });
    expect(fetch.calls).toHaveLength(3);
    expect(seenByMiddleware).toEqual([200]);
    expect(infos.map(({ attempt, status, error, delayMs }) => ({ attempt, status, error, delayMs }))).toEqual([
      { attempt: 2, status: 503, error: undefined, delayMs: 75 },
      { attempt: 3, status: 429, error: undefined, delayMs: 1000 },
    ]);
    expect(infos[0]).toMatchObject({ method: "GET", path: "/api/v1/auth/user" });
    // Nothing in it carries the token: printing it for metrics or logs is safe.
    expect(inspect(infos, { depth: 10, showHidden: true })).not.toContain("at_1");
  });

  it("reports a retried network failure with its NetworkError", async () => {
    const infos: RetryInfo[] = [];
    const fetch = fakeFetch(new TypeError("fetch failed"), json(200, { ok: true }));
    const client = createTenantClient({
      baseUrl,
      auth: staticToken("at_1"),
      fetch,
      retry: retryPolicy(noWait),
      onRetry: (info) => void infos.push(info),
    });
    const { data } = await client.GET("/api/v1/auth/user");
    expect(data).toEqual({ ok: true });
    expect(infos).toHaveLength(1);
    expect(infos[0]?.status).toBeUndefined();
    expect(infos[0]?.error).toBeInstanceOf(NetworkError);
    expect(infos[0]?.error?.code).toBe("NETWORK_ERROR");
  });

  it("gives a 401 that answers a retried network failure the one refresh-and-retry", async () => {
    let n = 1;
    const auth = { getAccessToken: async () => `at_${n}`, onUnauthorized: () => void n++ };
    const fetch = fakeFetch(new TypeError("fetch failed"), json(401, {}), json(200, { ok: true }));
    const { data } = await createTenantClient({ baseUrl, auth, fetch, retry: retryPolicy(noWait) }).GET(
      "/api/v1/auth/user",
    );
    expect(data).toEqual({ ok: true });
    expect(fetch.calls.map((c) => c.headers.get("authorization"))).toEqual([
      "Bearer at_1",
      "Bearer at_1",
      "Bearer at_2",
    ]);
  });

  it("throws the last NetworkError when every attempt failed on the network", async () => {
    const infos: RetryInfo[] = [];
    const fetch = fakeFetch(new TypeError("fetch failed"));
    const client = createTenantClient({
      baseUrl,
      auth: staticToken("at_1"),
      fetch,
      retry: retryPolicy({ ...noWait, retries: 2 }),
      onRetry: (info) => void infos.push(info),
    });
    const failure = await client.GET("/api/v1/auth/user").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(fetch.calls).toHaveLength(3);
    expect(infos.map((i) => i.attempt)).toEqual([2, 3]);
  });

  it("is not called for a POST, which is never retried", async () => {
    const infos: RetryInfo[] = [];
    const fetch = fakeFetch(json(503, {}), json(200, {}));
    const client = createTenantClient({
      baseUrl,
      auth: staticToken("at_1"),
      fetch,
      retry: retryPolicy(noWait),
      onRetry: (info) => void infos.push(info),
    });
    await client.raw.POST("/api/v1/tickets", { body: {} });
    expect(fetch.calls).toHaveLength(1);
    expect(infos).toEqual([]);
  });

  it("is taken from the policy's onRetry too, on the client and on a standalone retryMiddleware", async () => {
    const infos: RetryInfo[] = [];
    const onRetry = (info: RetryInfo) => void infos.push(info);
    await createTenantClient({
      baseUrl,
      auth: staticToken("at_1"),
      fetch: fakeFetch(json(502, {}), json(200, {})),
      retry: retryPolicy({ ...noWait, onRetry }),
    }).GET("/api/v1/auth/user");
    const plain = createClient<paths>({ baseUrl, fetch: fakeFetch(json(502, {}), json(200, {})) });
    plain.use(retryMiddleware({ ...noWait, onRetry }));
    await plain.GET("/api/v1/auth/user");
    expect(infos.map((i) => i.status)).toEqual([502, 502]);
  });

  it("ends the call with whatever it throws", async () => {
    const fetch = fakeFetch(json(503, {}), json(200, {}));
    const client = createTenantClient({
      baseUrl,
      auth: staticToken("at_1"),
      fetch,
      retry: retryPolicy(noWait),
      onRetry: () => {
        throw new RangeError("metrics broke");
      },
    });
    await expect(client.GET("/api/v1/auth/user")).rejects.toBeInstanceOf(RangeError);
    expect(fetch.calls).toHaveLength(1);
  });
});
