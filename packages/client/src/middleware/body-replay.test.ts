/**
 * Issue 20: a request body is kept as openapi-fetch serialized it, for the rare replay (after a
 * 401, or a retry), instead of reading a copy of every request with `clone().arrayBuffer()` before
 * it is sent. A streamed body can be sent once only, so its call is never sent again.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AccessTokenSource } from "../access-token-source.js";
import { createTenantClient } from "../create-tenant-client.js";
import { fakeFetch, json } from "../test-support/fake-fetch.js";
import { retryPolicy } from "./retry.js";

const baseUrl = "https://acme.tenant.example";
const unauthorized = () =>
  json(401, { error: "invalid_token" }, { "www-authenticate": 'Bearer error="invalid_token"' });
const noWait = { sleep: async () => undefined, random: () => 0.5 };

function rotatingAuth(): AccessTokenSource & { rejected: string[] } {
  let n = 1;
  const rejected: string[] = [];
  return {
    rejected,
    getAccessToken: async () => `at_${n}`,
    onUnauthorized: async (token: string) => {
      rejected.push(token);
      n++;
    },
  };
}

function streamOf(text: string): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the body of a call that may be sent again", () => {
  it("is sent again after a 401 as the same bytes, without the request being cloned first", async () => {
    const clone = vi.spyOn(Request.prototype, "clone");
    const auth = rotatingAuth();
    const fetch = fakeFetch(unauthorized(), json(201, { id: 7 }));
    const client = createTenantClient({ baseUrl, auth, fetch });
    const body = { subject: "Printer on fire", detail: "x".repeat(1024) };
    const { response } = await client.raw.POST("/api/v1/tickets", { body });
    expect(response.status).toBe(201);
    const [first, second] = fetch.calls;
    expect(first?.body).toBe(JSON.stringify(body));
    expect(second?.body).toBe(first?.body);
    expect(second?.headers.get("authorization")).toBe("Bearer at_2");
    expect(second?.headers.get("content-type")).toBe("application/json");
    expect(clone).not.toHaveBeenCalled();
  });

  it("is sent again by a retry of a PUT after a 503 as the same bytes, without a clone", async () => {
    const clone = vi.spyOn(Request.prototype, "clone");
    const fetch = fakeFetch(json(503, {}), json(200, { ok: true }));
    const client = createTenantClient({ baseUrl, auth: rotatingAuth(), fetch, retry: retryPolicy(noWait) });
    await client.raw.PUT("/api/v1/tickets/{id}", { params: { path: { id: 1 } }, body: { status: "closed" } });
    expect(fetch.calls.map((c) => c.body)).toEqual(['{"status":"closed"}', '{"status":"closed"}']);
    expect(clone).not.toHaveBeenCalled();
  });

  it("is what the caller's own bodySerializer made (a form body), sent again as it was", async () => {
    const fetch = fakeFetch(unauthorized(), json(200, {}));
    const client = createTenantClient({ baseUrl, auth: rotatingAuth(), fetch });
    await client.raw.POST("/api/v1/forms", {
      body: { a: "1", b: "two words" },
      bodySerializer: (body) => new URLSearchParams(body as Record<string, string>),
    });
    expect(fetch.calls.map((c) => c.body)).toEqual(["a=1&b=two+words", "a=1&b=two+words"]);
    expect(fetch.calls[1]?.headers.get("content-type")).toBe(fetch.calls[0]?.headers.get("content-type"));
  });

  it("is read from the request a middleware replaced, not from the serialized one it replaced", async () => {
    const fetch = fakeFetch(unauthorized(), json(200, {}));
    const client = createTenantClient({
      baseUrl,
      auth: rotatingAuth(),
      fetch,
      middleware: [{ onRequest: ({ request }) => new Request(request, { body: '{"signed":true}' }) }],
    });
    await client.raw.POST("/api/v1/tickets", { body: { signed: false } });
    expect(fetch.calls.map((c) => c.body)).toEqual(['{"signed":true}', '{"signed":true}']);
  });
});

describe("a streamed body", () => {
  it("is not sent again after a 401: the 401 comes back and the strategy is not asked to refresh", async () => {
    const auth = rotatingAuth();
    const fetch = fakeFetch(unauthorized(), json(200, {}));
    const client = createTenantClient({ baseUrl, auth, fetch });
    const { response } = await client.raw.POST("/api/v1/uploads", {
      body: "ignored",
      bodySerializer: () => streamOf("chunk of an upload"),
      duplex: "half",
    } as never);
    expect(response.status).toBe(401);
    expect(fetch.calls.map((c) => c.body)).toEqual(["chunk of an upload"]);
    expect(auth.rejected).toEqual([]);
  });

  it("is not retried after a 503, even on a PUT", async () => {
    const fetch = fakeFetch(json(503, {}), json(200, {}));
    const client = createTenantClient({ baseUrl, auth: rotatingAuth(), fetch, retry: retryPolicy(noWait) });
    const { response } = await client.raw.PUT("/api/v1/uploads/{id}", {
      params: { path: { id: 1 } },
      body: "ignored",
      bodySerializer: () => streamOf("chunk"),
      duplex: "half",
    } as never);
    expect(response.status).toBe(503);
    expect(fetch.calls).toHaveLength(1);
  });
});
