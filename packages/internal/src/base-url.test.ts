import { describe, expect, it } from "vitest";
import { isLoopback, tenantOrigin } from "./base-url.js";

/** Why `url` is refused, or "accepted". */
const reason = (url: string): string => {
  const checked = tenantOrigin(url);
  return "refused" in checked ? checked.refused : "accepted";
};

describe("tenantOrigin (the base URL rule of both kits)", () => {
  it.each([
    ["https://acme.tenant.test", "https://acme.tenant.test"],
    ["https://acme.tenant.test/", "https://acme.tenant.test"],
    ["https://ACME.tenant.test:443", "https://acme.tenant.test"],
    ["https://acme.tenant.test:8443", "https://acme.tenant.test:8443"],
    ["http://127.0.0.1:4010", "http://127.0.0.1:4010"],
    ["http://127.255.0.9", "http://127.255.0.9"],
    ["http://localhost:4010/", "http://localhost:4010"],
    ["http://[::1]:4010", "http://[::1]:4010"],
  ])("accepts %s as the origin %s", (input, origin) => {
    expect(tenantOrigin(input)).toEqual({ origin });
    expect(tenantOrigin(new URL(input))).toEqual({ origin });
  });

  it.each([
    ["acme.tenant.test", "not an absolute URL"],
    ["", "not an absolute URL"],
    ["/api", "not an absolute URL"],
    ["http://acme.tenant.test", "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])"],
    ["http://10.0.0.1", "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])"],
    ["http://localhost.evil.test", "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])"],
    ["http://127.0.0.1.evil.test", "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])"],
    ["http://128.0.0.1", "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])"],
    ["http://[::2]", "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])"],
    ["ftp://acme.tenant.test", "ftp: is not https"],
    ["https://user:pass@acme.tenant.test", "no credentials allowed"],
    ["https://user@acme.tenant.test", "no credentials allowed"],
    ["https://:pass@acme.tenant.test", "no credentials allowed"],
    ["https://acme.tenant.test/?x=1", "no query or fragment allowed"],
    ["https://acme.tenant.test/#f", "no query or fragment allowed"],
    // regression: https://x/? and https://x/# were accepted by the client
    ["https://acme.tenant.test/?", "no query or fragment allowed"],
    ["https://acme.tenant.test/#", "no query or fragment allowed"],
    ["HTTP://127.0.0.1:4010/?", "no query or fragment allowed"],
    // regression (issue 20): a path, /api/v1 above all, failed late with a bare 404
    ["https://acme.tenant.test/api/v1", "no path allowed: give the tenant's origin, e.g. https://acme.tenant.example"],
    ["https://acme.tenant.test/api/v1/", "no path allowed: give the tenant's origin, e.g. https://acme.tenant.example"],
    [
      "https://acme.tenant.test:8443/tenant/",
      "no path allowed: give the tenant's origin, e.g. https://acme.tenant.example",
    ],
  ])("refuses %s: %s", (input, why) => {
    expect(reason(input)).toBe(why);
  });

  it("never repeats the URL in its reason (it may hold credentials)", () => {
    expect(reason("https://user:s3cret@acme.tenant.test")).not.toContain("s3cret");
  });
});

describe("isLoopback", () => {
  it("knows the loopback names of RFC 8252 §8.3, as the URL parser writes them", () => {
    expect(["localhost", "127.0.0.1", "127.1.2.3", "[::1]"].every(isLoopback)).toBe(true);
    expect(
      ["localhost.evil.test", "128.0.0.1", "0.0.0.0", "::1", "127.0.0.1.evil.test", "127.0.0.1000"].some(isLoopback),
    ).toBe(false);
  });
});
