import { describe, expect, it } from "vitest";
import { failure } from "./test-support/failure.js";
import { redirectTarget, tenantBase } from "./options.js";

describe("tenantBase (the rule shared with the client, URL by URL, is tested in packages/internal/src/base-url.test.ts)", () => {
  it("returns the tenant's origin, normalized", () => {
    expect(tenantBase("https://ACME.tenant.test:443/")).toBe("https://acme.tenant.test");
    expect(tenantBase(new URL("http://[::1]:4010"))).toBe("http://[::1]:4010");
  });

  it.each([
    ["acme.tenant.test", "not an absolute URL"],
    ["http://acme.tenant.test", "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])"],
    ["https://user:pass@acme.tenant.test", "no credentials allowed"],
    ["https://acme.tenant.test/?", "no query or fragment allowed"],
    ["https://acme.tenant.test/api/v1", "no path allowed: give the tenant's origin, e.g. https://acme.tenant.example"],
  ])(
    "refuses %s with INVALID_OPTIONS saying why (%s), as the client does, without repeating the URL",
    (input, reason) => {
      expect(() => tenantBase(input)).toThrow(failure("INVALID_OPTIONS"));
      expect(() => tenantBase(input)).toThrow(
        expect.objectContaining({ code: "INVALID_OPTIONS", message: `INVALID_OPTIONS: baseUrl: ${reason}` }),
      );
    },
  );
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
