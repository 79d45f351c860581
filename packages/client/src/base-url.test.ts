import { describe, expect, it } from "vitest";
import { staticToken } from "./auth-strategy.js";
import { createTokenManager } from "@tenant-integration/token-manager";
import { apiPrefix, inScope } from "./base-url.js";
import { createTenantClient } from "./create-tenant-client.js";
import { TenantClientError } from "./errors.js";

function failure(baseUrl: string): unknown {
  try {
    apiPrefix(baseUrl);
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("apiPrefix (the base URL check)", () => {
  it("accepts https and gives the API prefix without a doubled slash", () => {
    expect(apiPrefix("https://acme.tenant.example/")).toBe("https://acme.tenant.example/api/v1");
    expect(apiPrefix("https://ACME.tenant.example:443")).toBe("https://acme.tenant.example/api/v1");
  });

  it("accepts http on loopback hosts only", () => {
    for (const url of ["http://localhost:4010", "http://127.0.0.1:4010", "http://127.255.0.9", "http://[::1]:8080"]) {
      expect(() => apiPrefix(url)).not.toThrow();
    }
  });

  it("refuses http on any other host, including look-alikes of loopback", () => {
    for (const url of ["http://acme.tenant.example", "http://10.0.0.1", "http://localhost.evil.example", "http://128.0.0.1", "http://[::2]"]) {
      expect((failure(url) as TenantClientError).code, url).toBe("INVALID_BASE_URL");
    }
  });

  it("refuses other schemes, relative URLs, credentials, queries and fragments", () => {
    for (const url of ["ftp://acme.example", "/api", "https://user:pw@acme.example", "https://acme.example/?a=1", "https://acme.example/#x"]) {
      expect(failure(url), url).toBeInstanceOf(TenantClientError);
    }
  });

  it("says why a base URL is refused, for each rule", () => {
    const reasons: Record<string, string> = {
      "acme.tenant.example": "not an absolute URL",
      "/api": "not an absolute URL",
      "http://acme.tenant.example": "http is allowed only to loopback",
      "ftp://acme.example": "ftp: is not https",
      "https://user:pw@acme.example": "no credentials allowed",
      "https://acme.example/?a=1": "no query or fragment allowed",
      "https://acme.example/#x": "no query or fragment allowed",
      "https://acme.example/api/v1": "no path allowed: give the tenant's origin, e.g. https://acme.tenant.example",
    };
    for (const [url, reason] of Object.entries(reasons)) {
      expect((failure(url) as TenantClientError).message, url).toContain(`Invalid baseUrl: ${reason}`);
    }
  });

  it("refuses an empty query or fragment, as the token manager does (regression: https://x/? and https://x/# were accepted)", () => {
    for (const url of ["https://acme.example/?", "https://acme.example/#", "https://acme.example/tenant?#"]) {
      const error = failure(url) as TenantClientError;
      expect(error, url).toBeInstanceOf(TenantClientError);
      expect(error.message, url).toBe("Invalid baseUrl: no query or fragment allowed");
    }
  });

  it("refuses a path, /api/v1 above all, which would otherwise fail late with a bare 404 (regression: issue 20)", () => {
    for (const url of ["https://acme.tenant.example/api/v1", "https://acme.tenant.example/api/v1/", "https://acme.tenant.example/tenant-a/", "http://127.0.0.1:4010/api"]) {
      const error = failure(url) as TenantClientError;
      expect(error, url).toBeInstanceOf(TenantClientError);
      expect(error.message, url).toBe("Invalid baseUrl: no path allowed: give the tenant's origin, e.g. https://acme.tenant.example");
    }
  });

  it("gives the same reason as the token manager for every refused base URL", () => {
    const refused = [
      "acme.tenant.example",
      "http://acme.tenant.example",
      "ftp://acme.example",
      "https://user:pw@acme.example",
      "https://acme.example/?a=1",
      "https://acme.example/#",
      "https://acme.example/api/v1",
    ];
    const tokenManagerReason = (baseUrl: string): unknown => {
      try {
        createTokenManager({ baseUrl, clientId: "c", redirectUri: "http://127.0.0.1:53682/callback", scopes: ["profile:read"] });
      } catch (e) {
        return (e as Error).message.replace(/^INVALID_OPTIONS: baseUrl: /, "");
      }
      return "accepted";
    };
    const clientReason = (baseUrl: string): unknown => (failure(baseUrl) as Error).message.replace(/^Invalid baseUrl: /, "");
    expect(refused.map(tokenManagerReason)).toEqual(refused.map(clientReason));
  });

  it("never echoes credentials in the error", () => {
    const error = failure("https://user:s3cret@acme.example") as TenantClientError;
    expect(error.name).toBe("TenantClientError");
    expect(error.code).toBe("INVALID_BASE_URL");
    expect(JSON.stringify(error) + String(error) + error.stack).not.toContain("s3cret");
  });

  it("makes createTenantClient throw the typed error", () => {
    expect(() => createTenantClient({ baseUrl: "http://acme.tenant.example", auth: staticToken("at_1") })).toThrow(TenantClientError);
  });
});

describe("inScope", () => {
  const prefix = "https://acme.tenant.example/api/v1";
  it("takes /api/v1 and what is below it, with a query or fragment", () => {
    for (const url of [prefix, `${prefix}/`, `${prefix}/auth/user`, `${prefix}?a=1`, `${prefix}#x`]) expect(inScope(url, prefix), url).toBe(true);
  });
  it("refuses /api/v10, other paths, other origins and look-alike hosts", () => {
    for (const url of [`${prefix}0`, "https://acme.tenant.example/oauth/token", "https://evil.example/api/v1", "https://acme.tenant.example.evil.example/api/v1"]) {
      expect(inScope(url, prefix), url).toBe(false);
    }
    expect(inScope(prefix, undefined)).toBe(false);
  });
});
