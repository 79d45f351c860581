/**
 * Contract test: every operation of the bundle, called through the client against a Prism mock of
 * the bundle on a loopback port chosen at run time. Prism answers a request that violates the
 * contract with an `sl-violations` header; no call may get one.
 */
import { createRequire } from "node:module";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startPrism, type RunningPrism } from "@tenant-integration/prism-testing";
import { staticToken } from "./access-token-source.js";
import { createTenantClient, type TenantClient } from "./create-tenant-client.js";
import { ForbiddenError, HttpError, UnauthorizedError } from "./errors.js";

const bundle = createRequire(import.meta.url).resolve("@tenant-integration/openapi/openapi.yaml");

let prism: RunningPrism | undefined;
let baseUrl = "";
let client: TenantClient;

function violations(response: Response): string | null {
  return response.headers.get("sl-violations");
}

const CODE_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

describe("contract: every operation through the client against Prism", () => {
  beforeAll(async () => {
    prism = await startPrism({ bundle });
    baseUrl = prism.url;
    client = createTenantClient({ baseUrl, auth: staticToken("at_2YotnFZFEjr1zCsicMWpAA"), retry: false });
  });

  afterEach(async (context) => {
    // a failed test must not leave Prism running
    if (context.task.result?.state === "fail") await prism?.stop();
  });

  afterAll(async () => {
    await prism?.stop();
  });

  it("exchanges an authorization code (authorization_code grant)", async () => {
    const { data, response } = await client.POST("/oauth/token", {
      body: {
        grant_type: "authorization_code",
        client_id: "demo-integration",
        redirect_uri: "https://app.example/callback",
        code: "SplxlOBeZQQYbYS6WxSbIA",
        code_verifier: CODE_VERIFIER,
      },
    });
    expect(violations(response)).toBeNull();
    expect(response.status).toBe(200);
    expect(data?.access_token).toEqual(expect.any(String));
  });

  it("refreshes a token (refresh_token grant)", async () => {
    const { data, response } = await client.POST("/oauth/token", {
      body: { grant_type: "refresh_token", refresh_token: "rt_tGzv3JOkF0XG5Qx2TlKWIA", client_id: "demo-integration" },
    });
    expect(violations(response)).toBeNull();
    expect(response.status).toBe(200);
    expect(data?.token_type).toEqual(expect.any(String));
  });

  it("revokes a token with a JSON body", async () => {
    const { response } = await client.POST("/oauth/revoke", {
      body: { token: "at_2YotnFZFEjr1zCsicMWpAA", token_type_hint: "access_token", client_id: "demo-integration" },
    });
    expect(violations(response)).toBeNull();
    expect(response.status).toBe(200);
  });

  it("revokes a token with a form body (RFC 7009 §2.1)", async () => {
    const { response } = await client.POST("/oauth/revoke", {
      body: { token: "at_2YotnFZFEjr1zCsicMWpAA", token_type_hint: "access_token", client_id: "demo-integration" },
      bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(violations(response)).toBeNull();
    expect(response.status).toBe(200);
  });

  it("reads the authenticated user with the bearer token", async () => {
    const { data, error, response } = await client.GET("/api/v1/auth/user");
    expect(violations(response)).toBeNull();
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data).toEqual(expect.any(Object));
  });

  it("starts the authorization without following the redirect", async () => {
    const { response } = await client.GET("/oauth/authorize", {
      params: {
        query: {
          response_type: "code",
          client_id: "demo-integration",
          redirect_uri: "https://app.example/callback",
          scope: "profile:read",
          state: "af0ifjsldkj",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
        },
      },
      headers: { Accept: "text/html" },
      parseAs: "text",
      redirect: "manual",
    });
    expect(violations(response)).toBeNull();
    expect([200, 302]).toContain(response.status);
  });

  it("gets a 401 from Prism when no token is sent (the route is protected)", async () => {
    const anonymous = await fetch(`${baseUrl}/api/v1/auth/user`, { headers: { Accept: "application/json" } });
    expect(anonymous.status).toBe(401);
  });

  it("turns Prism's documented 403 into a ForbiddenError with status, body and headers", async () => {
    const { error, response } = await client.GET("/api/v1/auth/user", { headers: { Prefer: "code=403" } });
    expect(violations(response)).toBeNull();
    expect(response.status).toBe(403);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ status: 403, body: expect.any(Object) });
    expect(error?.headers["www-authenticate"]).toContain("Bearer");
  });

  it("turns Prism's documented 401 into an UnauthorizedError (staticToken cannot refresh)", async () => {
    const { error, response } = await client.GET("/api/v1/auth/user", { headers: { Prefer: "code=401" } });
    expect(violations(response)).toBeNull();
    expect(response.status).toBe(401);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED", body: expect.any(Object) });
    expect(error?.headers["www-authenticate"]).toContain("Bearer");
  });

  it("turns the token endpoint's documented 400 into an HttpError with the OAuth error body", async () => {
    const { error, response } = await client.POST("/oauth/token", {
      body: { grant_type: "refresh_token", refresh_token: "rt_tGzv3JOkF0XG5Qx2TlKWIA", client_id: "demo-integration" },
      headers: { Prefer: "code=400" },
    });
    expect(violations(response)).toBeNull();
    expect(response.status).toBe(400);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 400, code: "HTTP_ERROR", body: { error: expect.any(String) } });
  });

  it("sees a violation reported when a body breaks the contract (the check is live)", async () => {
    const { response } = await client.POST("/oauth/token", {
      body: {
        grant_type: "authorization_code",
        client_id: "demo-integration",
        redirect_uri: "https://app.example/callback",
        code: "x",
        code_verifier: "short",
      },
    });
    expect(violations(response)).not.toBeNull();
  });
});
