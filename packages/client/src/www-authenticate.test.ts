import { describe, expect, it } from "vitest";
import { parseBearerChallenge, parseWwwAuthenticate } from "./www-authenticate.js";

describe("parseBearerChallenge (RFC 6750 §3)", () => {
  it("reads the required scope of an insufficient_scope challenge", () => {
    expect(parseBearerChallenge('Bearer error="insufficient_scope", scope="profile:read"')).toEqual({
      error: "insufficient_scope",
      scope: ["profile:read"],
    });
  });

  it("splits a scope list on spaces", () => {
    expect(parseBearerChallenge('Bearer scope="profile:read  users:read"')?.scope).toEqual(["profile:read", "users:read"]);
  });

  it("matches the scheme case-insensitively and parameter names too", () => {
    expect(parseBearerChallenge('bEaReR ERROR="insufficient_scope", Scope="tickets:read"')).toEqual({
      error: "insufficient_scope",
      scope: ["tickets:read"],
    });
  });

  it("reads realm, error_description and error_uri, with commas and escapes inside quotes", () => {
    expect(
      parseBearerChallenge(
        'Bearer realm="tenant, api", error="insufficient_scope", error_description="needs \\"profile:read\\", sorry", error_uri="https://x.example/e"',
      ),
    ).toEqual({
      realm: "tenant, api",
      error: "insufficient_scope",
      errorDescription: 'needs "profile:read", sorry',
      errorUri: "https://x.example/e",
      scope: [],
    });
  });

  it("accepts unquoted token values and whitespace around =", () => {
    expect(parseBearerChallenge("Bearer error = insufficient_scope ,scope=profile:read")).toEqual({
      error: "insufficient_scope",
      scope: ["profile:read"],
    });
  });

  it("finds the Bearer challenge among several", () => {
    expect(parseBearerChallenge('Basic realm="x", Bearer error="insufficient_scope", scope="a b", DPoP algs="ES256"')?.scope).toEqual(["a", "b"]);
  });

  it("returns undefined without a header or without a Bearer challenge", () => {
    expect(parseBearerChallenge(null)).toBeUndefined();
    expect(parseBearerChallenge('Basic realm="x"')).toBeUndefined();
  });

  it("gives an empty scope list for a bare Bearer challenge", () => {
    expect(parseBearerChallenge("Bearer")).toEqual({ scope: [] });
  });

  it("never throws on malformed input and keeps what it could read", () => {
    expect(parseBearerChallenge('Bearer scope="profile:read')?.scope).toEqual(["profile:read"]);
    expect(() => parseWwwAuthenticate('=,,"Bearer ,=, x="')).not.toThrow();
  });
});

describe("parseWwwAuthenticate (RFC 9110 §11.6.1)", () => {
  it("tells a token68 from auth-params", () => {
    expect(parseWwwAuthenticate("Negotiate abc123==, Bearer realm=x")).toEqual([
      { scheme: "Negotiate", params: {}, token68: "abc123==" },
      { scheme: "Bearer", params: { realm: "x" } },
    ]);
  });

  it("skips empty list elements", () => {
    expect(parseWwwAuthenticate(' , Bearer , , realm="a" ,')).toEqual([{ scheme: "Bearer", params: { realm: "a" } }]);
  });

  it("keeps the first value of a repeated parameter", () => {
    expect(parseWwwAuthenticate('Bearer scope="a", scope="b"')[0]?.params).toEqual({ scope: "a" });
  });
});
