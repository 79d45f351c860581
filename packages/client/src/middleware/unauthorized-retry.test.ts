import createClient from "openapi-fetch";
import type { paths } from "@tenant-integration/types";
import { describe, expect, it } from "vitest";
import type { AccessTokenSource } from "../access-token-source.js";
import { staticToken } from "../access-token-source.js";
import { createTenantClient } from "../create-tenant-client.js";
import { UnauthorizedError } from "../errors.js";
import { fakeFetch, json } from "../test-support/fake-fetch.js";
import type { RawPaths } from "../client-types.js";
import { bearerMiddleware } from "./bearer.js";
import { retryMiddleware } from "./retry.js";
import { unauthorizedRetryMiddleware } from "./unauthorized-retry.js";

const baseUrl = "https://acme.tenant.example";

/** A strategy that hands out at_1, then at_2 after each onUnauthorized, and records the calls. */
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

const unauthorized = () =>
  json(401, { error: "invalid_token" }, { "www-authenticate": 'Bearer error="invalid_token"' });

describe("unauthorizedRetryMiddleware", () => {
  it("on a 401 calls onUnauthorized once with the rejected token and retries once with a fresh one", async () => {
    const auth = rotatingAuth();
    const fetch = fakeFetch(unauthorized(), json(200, { id: 1 }));
    const client = createTenantClient({ baseUrl, auth, fetch });
    const { data, response } = await client.GET("/api/v1/auth/user");
    expect(response.status).toBe(200);
    expect(data).toEqual({ id: 1 });
    expect(auth.rejected).toEqual(["at_1"]);
    expect(fetch.calls.map((c) => c.headers.get("authorization"))).toEqual(["Bearer at_1", "Bearer at_2"]);
  });

  it("replays the same method, headers and body on the retry", async () => {
    const auth = rotatingAuth();
    const fetch = fakeFetch(unauthorized(), json(200, { ok: true }));
    const client = createTenantClient({ baseUrl, auth, fetch });
    await client.raw.PUT("/api/v1/tickets/{id}", {
      params: { path: { id: 42 } },
      body: { subject: "Printer on fire" },
      headers: { "X-Request-Id": "r-1" },
    });
    const [first, second] = fetch.calls;
    expect(second?.method).toBe("PUT");
    expect(second?.url).toBe(`${baseUrl}/api/v1/tickets/42`);
    expect(second?.body).toBe('{"subject":"Printer on fire"}');
    expect(second?.body).toBe(first?.body);
    expect(second?.headers.get("x-request-id")).toBe("r-1");
    expect(second?.headers.get("content-type")).toBe("application/json");
  });

  it("replays a POST body too (a 401 means the server did not act on it)", async () => {
    const auth = rotatingAuth();
    const fetch = fakeFetch(unauthorized(), json(201, { id: 9 }));
    const client = createTenantClient({ baseUrl, auth, fetch });
    await client.raw.POST("/api/v1/contacts", { body: { name: "Ada" } });
    expect(fetch.calls.map((c) => c.body)).toEqual(['{"name":"Ada"}', '{"name":"Ada"}']);
  });

  it("returns a second 401 as is, without a third request or a second onUnauthorized", async () => {
    const auth = rotatingAuth();
    const fetch = fakeFetch(unauthorized(), unauthorized(), json(200, {}));
    const client = createTenantClient({ baseUrl, auth, fetch });
    const { error, response } = await client.GET("/api/v1/auth/user");
    expect(response.status).toBe(401);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error?.body).toEqual({ error: "invalid_token" });
    expect(fetch.calls).toHaveLength(2);
    expect(auth.rejected).toEqual(["at_1"]);
  });

  it("does not retry when the strategy has no fresh token (staticToken)", async () => {
    const fetch = fakeFetch(unauthorized(), json(200, {}));
    const client = createTenantClient({ baseUrl, auth: staticToken("at_static"), fetch });
    const { response } = await client.GET("/api/v1/auth/user");
    expect(response.status).toBe(401);
    expect(fetch.calls).toHaveLength(1);
  });

  it("does not touch a 401 from an OAuth endpoint, which carried no token", async () => {
    const auth = rotatingAuth();
    const fetch = fakeFetch(json(401, { error: "invalid_client" }), json(200, {}));
    const client = createTenantClient({ baseUrl, auth, fetch });
    const { response } = await client.POST("/oauth/token", {
      body: { grant_type: "refresh_token", refresh_token: "rt_x", client_id: "demo" },
    });
    expect(response.status).toBe(401);
    expect(auth.rejected).toEqual([]);
    expect(fetch.calls).toHaveLength(1);
  });

  it("works on a plain openapi-fetch client next to bearerMiddleware", async () => {
    const auth = rotatingAuth();
    const fetch = fakeFetch(unauthorized(), json(200, { id: 1 }));
    const client = createClient<paths>({ baseUrl, fetch });
    client.use(unauthorizedRetryMiddleware({ baseUrl, auth }), bearerMiddleware({ baseUrl, auth }));
    const { data } = await client.GET("/api/v1/auth/user");
    expect(data).toEqual({ id: 1 });
    expect(auth.rejected).toEqual(["at_1"]);
  });

  for (const order of ["bearer first", "unauthorized first"] as const) {
    it(`replays the body on a plain client whatever the order of registration (${order})`, async () => {
      const auth = rotatingAuth();
      const fetch = fakeFetch(unauthorized(), json(200, {}));
      const client = createClient<RawPaths>({ baseUrl, fetch });
      const bearer = bearerMiddleware({ baseUrl, auth });
      const retry = unauthorizedRetryMiddleware({ baseUrl, auth });
      // bearerMiddleware replaces the request (manual redirects) after the retry middleware saw it
      client.use(...(order === "bearer first" ? [bearer, retry] : [retry, bearer]));
      await client.POST("/api/v1/contacts", { body: { name: "Ada" } });
      expect(fetch.calls.map((c) => [c.headers.get("authorization"), c.body])).toEqual([
        ["Bearer at_1", '{"name":"Ada"}'],
        ["Bearer at_2", '{"name":"Ada"}'],
      ]);
    });
  }

  it("refreshes after a 401 that answered a retry of a failed connection, on a plain client with each middleware on its own", async () => {
    const auth = rotatingAuth();
    const fetch = fakeFetch(new TypeError("fetch failed"), unauthorized(), json(200, { id: 1 }));
    const client = createClient<paths>({ baseUrl, fetch });
    client.use(
      bearerMiddleware({ baseUrl, auth }),
      unauthorizedRetryMiddleware({ baseUrl, auth }),
      retryMiddleware({ retries: 1, sleep: async () => {} }),
    );
    const { data, response } = await client.GET("/api/v1/auth/user");
    expect(response.status).toBe(200);
    expect(data).toEqual({ id: 1 });
    expect(fetch.calls.map((c) => c.headers.get("authorization"))).toEqual([
      "Bearer at_1",
      "Bearer at_1",
      "Bearer at_2",
    ]);
  });
});
