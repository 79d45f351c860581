import createClient from "openapi-fetch";
import type { components, paths } from "@tenant-integration/types";
import { describe, expect, expectTypeOf, it } from "vitest";
import { staticToken, type AccessTokenSource } from "./access-token-source.js";
import { createTenantClient, type TenantClient } from "./create-tenant-client.js";
import type { ForbiddenError, ScopeName } from "./errors.js";
import { bearerMiddleware } from "./middleware/bearer.js";
import { retryMiddleware } from "./middleware/retry.js";
import { unauthorizedRetryMiddleware } from "./middleware/unauthorized-retry.js";
import { fakeFetch, json } from "./test-support/fake-fetch.js";

const baseUrl = "https://acme.tenant.example";
const client: TenantClient = createTenantClient({
  baseUrl,
  auth: staticToken("at_1"),
  fetch: fakeFetch(json(200, {})),
});

describe("types of the tenant client", () => {
  it("types data and error of a contract operation, with ForbiddenError in the error union", async () => {
    const { data, error } = await client.GET("/api/v1/auth/user");
    expectTypeOf(data).toEqualTypeOf<components["schemas"]["User"] | undefined>();
    expectTypeOf<ForbiddenError>().toMatchTypeOf<NonNullable<typeof error>>();
    if (error === undefined) expectTypeOf(data).toEqualTypeOf<components["schemas"]["User"]>();
    expect(data).toEqual({});
  });

  it("types the token exchange body as the union of the two grants", async () => {
    const { data } = await client.POST("/oauth/token", {
      body: { grant_type: "refresh_token", refresh_token: "rt_1", client_id: "demo" },
    });
    expectTypeOf(data).toEqualTypeOf<
      components["schemas"]["TokenResponse"] | components["schemas"]["RefreshTokenResponse"] | undefined
    >();
    expect(data).toEqual({});
  });

  it("rejects what the contract does not allow at compile time", () => {
    // each line must fail to compile; the calls are never made
    const never = (): void => {
      // @ts-expect-error an unknown path
      void client.GET("/api/v1/unknown");
      // @ts-expect-error a method the path does not have
      void client.POST("/api/v1/auth/user");
      // @ts-expect-error a wrong grant_type
      void client.POST("/oauth/token", { body: { grant_type: "password", client_id: "x" } });
      const withoutVerifier = {
        grant_type: "authorization_code",
        client_id: "x",
        code: "c",
        redirect_uri: "https://a",
      } as const;
      // @ts-expect-error a missing required field of the authorization code grant
      void client.POST("/oauth/token", { body: withoutVerifier });
      // @ts-expect-error the authorize query is required
      void client.GET("/oauth/authorize");
      // @ts-expect-error the escape hatch only takes /api/v1 paths
      void client.raw.GET("/oauth/token");
      // @ts-expect-error the escape hatch refuses other prefixes too
      void client.raw.GET("/api/v2/tickets");
    };
    expect(typeof never).toBe("function");
  });

  it("types the escape hatch as unknown JSON in and out", async () => {
    const { data, error } = await client.raw.POST("/api/v1/tickets", { body: { anything: [1, 2] } });
    expectTypeOf(data).toEqualTypeOf<unknown>();
    expectTypeOf<ForbiddenError>().toMatchTypeOf<typeof error>();
    expect(data).toEqual({});
  });

  it("types ScopeName as known scopes plus any string", () => {
    expectTypeOf<"profile:read">().toMatchTypeOf<ScopeName>();
    expectTypeOf<"custom:scope">().toMatchTypeOf<ScopeName>();
    expectTypeOf<42>().not.toMatchTypeOf<ScopeName>();
  });

  it("accepts any object with getAccessToken as a strategy, and rejects one without", () => {
    const ok: AccessTokenSource = { getAccessToken: async () => "t" };
    // @ts-expect-error getAccessToken must return a Promise<string>
    const bad: AccessTokenSource = { getAccessToken: () => 1 };
    expect(typeof ok.getAccessToken).toBe("function");
    expect(bad).toBeDefined();
  });

  it("exports middleware usable with a plain createClient", () => {
    const plain = createClient<paths>({ baseUrl });
    const auth = staticToken("at_1");
    plain.use(
      unauthorizedRetryMiddleware({ baseUrl, auth }),
      retryMiddleware({ retries: 1 }),
      bearerMiddleware({ baseUrl, auth }),
    );
    expectTypeOf(plain.GET).toBeFunction();
    expect(typeof plain.GET).toBe("function");
  });
});
