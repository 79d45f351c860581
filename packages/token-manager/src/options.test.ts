import { describe, expect, it } from "vitest";
import { failure } from "./testing/failure.js";
import { isLoopback, redirectTarget, tenantBase } from "./options.js";

describe("tenantBase", () => {
  it.each([
    ["https://acme.tenant.test", "https://acme.tenant.test"],
    ["https://acme.tenant.test/", "https://acme.tenant.test"],
    ["https://acme.tenant.test:8443", "https://acme.tenant.test:8443"],
    ["http://127.0.0.1:4010", "http://127.0.0.1:4010"],
    ["http://localhost:4010/", "http://localhost:4010"],
    ["http://[::1]:4010", "http://[::1]:4010"],
  ])("accepts %s", (input, base) => {
    expect(tenantBase(input)).toBe(base);
  });

  it.each([
    "http://acme.tenant.test",
    "http://10.0.0.1",
    "http://127.0.0.1.evil.test",
    "ftp://acme.tenant.test",
    "https://user:pass@acme.tenant.test",
    "https://user@acme.tenant.test",
    "https://:pass@acme.tenant.test",
    "https://acme.tenant.test/?x=1",
    "https://acme.tenant.test/#f",
    "https://acme.tenant.test/?",
    "https://acme.tenant.test/#",
    "HTTP://127.0.0.1:4010/?",
    "acme.tenant.test",
    "",
    "https://acme.tenant.test/api/v1",
    "https://acme.tenant.test:8443/tenant/",
  ])("rejects %s with INVALID_OPTIONS", (input) => {
    expect(() => tenantBase(input)).toThrow(failure("INVALID_OPTIONS"));
  });

  it.each([
    ["acme.tenant.test", "not an absolute URL"],
    ["http://acme.tenant.test", "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])"],
    ["ftp://acme.tenant.test", "ftp: is not https"],
    ["https://user:pass@acme.tenant.test", "no credentials allowed"],
    ["https://acme.tenant.test/?", "no query or fragment allowed"],
    ["https://acme.tenant.test/api/v1", "no path allowed: give the tenant's origin, e.g. https://acme.tenant.example"],
  ])("says why it rejects %s (%s), as the client does, without repeating the URL", (input, reason) => {
    expect(() => tenantBase(input)).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS", message: `INVALID_OPTIONS: baseUrl: ${reason}` }));
  });
});

describe("redirectTarget", () => {
  it("returns the scheme, host, port and path a callback must share with the URI", () => {
    expect(redirectTarget("http://127.0.0.1:53682/callback")).toBe("http://127.0.0.1:53682/callback");
    expect(redirectTarget("https://app.example.org")).toBe("https://app.example.org/");
    expect(redirectTarget("HTTPS://App.Example.org:443/cb?x=1")).toBe("https://app.example.org/cb");
  });

  it("rejects a relative URI or one with a fragment", () => {
    expect(() => redirectTarget("/callback")).toThrow(failure("INVALID_OPTIONS"));
    expect(() => redirectTarget("https://app.example.org/cb#x")).toThrow(failure("INVALID_OPTIONS"));
  });
});

describe("isLoopback", () => {
  it("knows the loopback names of RFC 8252 §8.3", () => {
    expect(["localhost", "127.0.0.1", "127.1.2.3", "[::1]"].every(isLoopback)).toBe(true);
    expect(["localhost.evil.test", "128.0.0.1", "0.0.0.0", "::1"].some(isLoopback)).toBe(false);
  });
});
