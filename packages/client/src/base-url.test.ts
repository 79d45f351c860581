/**
 * The client's side of the base URL rule (the rule itself, URL by URL, is tested with it in
 * `packages/internal/src/base-url.test.ts`): the API prefix it gives, and that a refused URL fails
 * with the same code and reason as in the token manager (regression, issue 29 point 3:
 * `INVALID_BASE_URL` here, `INVALID_OPTIONS` there, and loopback patterns that had drifted apart).
 */
import { describe, expect, it } from "vitest";
import { staticToken } from "./access-token-source.js";
import { createTokenManager } from "@tenant-integration/token-manager";
import { apiPrefix, inScope } from "./base-url.js";
import { createTenantClient } from "./create-tenant-client.js";
import { TenantClientError } from "./errors.js";
import { bearerMiddleware } from "./middleware/bearer.js";

function failure(baseUrl: string): TenantClientError | undefined {
  try {
    apiPrefix(baseUrl);
  } catch (e) {
    return e as TenantClientError;
  }
  return undefined;
}

const REFUSED = [
  "acme.tenant.example",
  "/api",
  "http://acme.tenant.example",
  "http://localhost.evil.example",
  "http://127.0.0.1000",
  "ftp://acme.example",
  "https://user:pw@acme.example",
  "https://acme.example/?a=1",
  "https://acme.example/#",
  "https://acme.example/api/v1",
];

describe("apiPrefix (the client's base URL check)", () => {
  it("accepts https and http on loopback, and gives the API prefix without a doubled slash", () => {
    expect(apiPrefix("https://acme.tenant.example/")).toBe("https://acme.tenant.example/api/v1");
    expect(apiPrefix("https://ACME.tenant.example:443")).toBe("https://acme.tenant.example/api/v1");
    expect(apiPrefix("http://[::1]:8080")).toBe("http://[::1]:8080/api/v1");
  });

  it("refuses a URL with INVALID_OPTIONS and a message naming baseUrl and saying why", () => {
    const error = failure("https://acme.example/api/v1");
    expect(error).toBeInstanceOf(TenantClientError);
    expect(error?.name).toBe("TenantClientError");
    expect(error?.code).toBe("INVALID_OPTIONS");
    expect(error?.message).toBe(
      "Invalid baseUrl: no path allowed: give the tenant's origin, e.g. https://acme.tenant.example",
    );
  });

  it("refuses every URL the token manager refuses, with the same code and the same reason", () => {
    const tokenManager = (baseUrl: string): unknown => {
      try {
        createTokenManager({
          baseUrl,
          clientId: "c",
          redirectUri: "http://127.0.0.1:53682/callback",
          scopes: ["profile:read"],
        });
      } catch (e) {
        const { code, message } = e as { code: string; message: string };
        return { code, reason: message.replace(/^INVALID_OPTIONS: baseUrl: /, "") };
      }
      return "accepted";
    };
    const client = (baseUrl: string): unknown => {
      const error = failure(baseUrl);
      return error ? { code: error.code, reason: error.message.replace(/^Invalid baseUrl: /, "") } : "accepted";
    };
    expect(REFUSED.map(client)).toEqual(REFUSED.map(tokenManager));
    expect(REFUSED.map(client)).not.toContain("accepted");
  });

  it("never echoes credentials in the error", () => {
    const error = failure("https://user:s3cret@acme.example");
    expect(error?.code).toBe("INVALID_OPTIONS");
    expect(JSON.stringify(error) + String(error) + error?.stack).not.toContain("s3cret");
  });

  it("makes createTenantClient and the middleware factories throw the typed error", () => {
    expect(() => createTenantClient({ baseUrl: "http://acme.tenant.example", auth: staticToken("at_1") })).toThrow(
      expect.objectContaining({ name: "TenantClientError", code: "INVALID_OPTIONS" }),
    );
    expect(() => bearerMiddleware({ baseUrl: "https://acme.example/api/v1", auth: staticToken("at_1") })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS" }),
    );
  });
});

describe("inScope", () => {
  const prefix = "https://acme.tenant.example/api/v1";
  it("takes /api/v1 and what is below it, with a query or fragment", () => {
    for (const url of [prefix, `${prefix}/`, `${prefix}/auth/user`, `${prefix}?a=1`, `${prefix}#x`])
      expect(inScope(url, prefix), url).toBe(true);
  });
  it("refuses /api/v10, other paths, other origins and look-alike hosts", () => {
    for (const url of [
      `${prefix}0`,
      "https://acme.tenant.example/oauth/token",
      "https://evil.example/api/v1",
      "https://acme.tenant.example.evil.example/api/v1",
    ]) {
      expect(inScope(url, prefix), url).toBe(false);
    }
    expect(inScope(prefix, undefined)).toBe(false);
  });
});
