import { describe, expect, it } from "vitest";
import { staticToken } from "./auth-strategy.js";
import { createTenantClient } from "./create-tenant-client.js";
import { InvalidBaseUrlError } from "./errors.js";
import { validateBaseUrl } from "./base-url.js";

describe("validateBaseUrl", () => {
  it("accepts https and strips a trailing slash", () => {
    expect(validateBaseUrl("https://acme.tenant.example/")).toBe("https://acme.tenant.example");
    expect(validateBaseUrl("https://acme.tenant.example/tenant-a/")).toBe("https://acme.tenant.example/tenant-a");
  });

  it("accepts http on loopback hosts only", () => {
    for (const url of ["http://localhost:4010", "http://127.0.0.1:4010", "http://127.255.0.9", "http://[::1]:8080"]) {
      expect(() => validateBaseUrl(url)).not.toThrow();
    }
  });

  it("refuses http on any other host, including look-alikes of loopback", () => {
    for (const url of ["http://acme.tenant.example", "http://10.0.0.1", "http://localhost.evil.example", "http://128.0.0.1", "http://[::2]"]) {
      expect(() => validateBaseUrl(url), url).toThrow(InvalidBaseUrlError);
    }
  });

  it("refuses other schemes, relative URLs, credentials, queries and fragments", () => {
    for (const url of ["ftp://acme.example", "/api", "https://user:pw@acme.example", "https://acme.example/?a=1", "https://acme.example/#x"]) {
      expect(() => validateBaseUrl(url), url).toThrow(InvalidBaseUrlError);
    }
  });

  it("never echoes credentials in the error", () => {
    const error = (() => {
      try {
        validateBaseUrl("https://user:s3cret@acme.example");
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidBaseUrlError);
    expect(JSON.stringify(error) + String(error)).not.toContain("s3cret");
    expect((error as InvalidBaseUrlError).code).toBe("INVALID_BASE_URL");
    expect((error as InvalidBaseUrlError).name).toBe("InvalidBaseUrlError");
  });

  it("makes createTenantClient throw the typed error", () => {
    expect(() => createTenantClient({ baseUrl: "http://acme.tenant.example", auth: staticToken("at_1") })).toThrow(InvalidBaseUrlError);
  });
});
