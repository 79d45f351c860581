import { describe, expect, it } from "vitest";
import { ClientConfigError, createClock, parseClientSpec, parseConfig } from "../src/index.js";
import { s256Challenge, timingSafeEqual } from "../src/crypto.js";
import { escapeHtml } from "../src/html.js";
import { safeDescription } from "../src/errors.js";

describe("small parts", () => {
  it("computes the S256 challenge of RFC 7636 Appendix B", async () => {
    expect(await s256Challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
  });

  it("compares strings of different lengths and contents as unequal", () => {
    expect(timingSafeEqual("abc", "abc")).toBe(true);
    expect(timingSafeEqual("abc", "abd")).toBe(false);
    expect(timingSafeEqual("abc", "abcd")).toBe(false);
    expect(timingSafeEqual("", "")).toBe(true);
  });

  it("escapes the five HTML-significant characters and the backtick", () => {
    expect(escapeHtml(`<a href="x" title='y'>&\``)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&#96;");
  });

  it("keeps error descriptions within RFC 6749 §5.2's characters", () => {
    expect(safeDescription('a "b" \\ é\n')).toBe("a ?b? ? ??");
  });

  it("never moves the clock backwards", () => {
    const clock = createClock(() => 1000);
    expect(clock.advance(1.5)).toBe(2500);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(Number.NaN)).toThrow(RangeError);
    expect(clock.now()).toBe(2500);
  });

  it("parses a client spec with repeated redirect keys", () => {
    expect(parseClientSpec("id=x,redirect=http://a/cb,redirect=http://b/cb")).toEqual({
      id: "x",
      redirectUris: ["http://a/cb", "http://b/cb"],
    });
  });

  it("parses a config file and names the field it refuses", () => {
    expect(
      parseConfig({ port: 0, clients: [{ id: "a", redirectUris: ["http://a/cb"] }], defaultScopes: ["tickets:read"] }),
    ).toEqual({
      port: 0,
      clients: [{ id: "a", redirectUris: ["http://a/cb"] }],
      defaultScopes: ["tickets:read"],
    });
    expect(() => parseConfig({ port: 70000 })).toThrow(/port/);
    expect(() => parseConfig({ clients: [{ id: "a", redirectUris: ["http://a/cb"], secret: "x" }] })).toThrow(
      /unknown field "secret"/,
    );
    expect(() => parseConfig({ defaultScopes: ["root"] })).toThrow(ClientConfigError);
    expect(() => parseConfig([])).toThrow(/JSON object/);
  });

  it("parses stateFile, rotationGraceSeconds and allowedHosts, and refuses bad values", () => {
    expect(
      parseConfig({ stateFile: ".sandbox/state.json", rotationGraceSeconds: 60, allowedHosts: ["Tenant.Test"] }),
    ).toEqual({
      stateFile: ".sandbox/state.json",
      rotationGraceSeconds: 60,
      allowedHosts: ["tenant.test"],
    });
    expect(() => parseConfig({ stateFile: "" })).toThrow(/stateFile/);
    expect(() => parseConfig({ rotationGraceSeconds: 3601 })).toThrow(/rotationGraceSeconds/);
    expect(() => parseConfig({ rotationGraceSeconds: "30" })).toThrow(/rotationGraceSeconds/);
    expect(() => parseConfig({ allowedHosts: ["http://tenant.test"] })).toThrow(/allowedHosts/);
  });
});
