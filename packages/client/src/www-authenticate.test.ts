import { describe, expect, it } from "vitest";
import { bearerChallenge } from "./www-authenticate.js";

describe("bearerChallenge (RFC 6750 §3)", () => {
  it("reads the error and the required scope of an insufficient_scope challenge", () => {
    expect(bearerChallenge('Bearer error="insufficient_scope", scope="profile:read"')).toEqual({
      error: "insufficient_scope",
      scope: "profile:read",
    });
  });

  it("matches the scheme case-insensitively and lower-cases parameter names", () => {
    expect(bearerChallenge('bEaReR ERROR="insufficient_scope", Scope="tickets:read"')).toEqual({
      error: "insufficient_scope",
      scope: "tickets:read",
    });
  });

  it("reads quoted strings with commas and escapes", () => {
    expect(
      bearerChallenge(
        'Bearer realm="tenant, api", error="insufficient_scope", error_description="needs \\"profile:read\\", sorry"',
      ),
    ).toEqual({ realm: "tenant, api", error: "insufficient_scope", error_description: 'needs "profile:read", sorry' });
  });

  it("accepts unquoted token values and whitespace around =", () => {
    expect(bearerChallenge("Bearer error = insufficient_scope ,scope=profile:read")).toEqual({
      error: "insufficient_scope",
      scope: "profile:read",
    });
  });

  it("finds the Bearer challenge among several and stops at the next one", () => {
    expect(
      bearerChallenge('Basic realm="x", Bearer error="insufficient_scope", scope="a b", DPoP algs="ES256"'),
    ).toEqual({
      error: "insufficient_scope",
      scope: "a b",
    });
    expect(bearerChallenge('Negotiate abc123==, Bearer realm="y"')).toEqual({ realm: "y" });
  });

  it("keeps the first value of a repeated parameter", () => {
    expect(bearerChallenge('Bearer scope="a", scope="b"')).toEqual({ scope: "a" });
  });

  it("returns undefined without a header or without a Bearer challenge, and {} for a bare one", () => {
    expect(bearerChallenge(null)).toBeUndefined();
    expect(bearerChallenge('Basic realm="x"')).toBeUndefined();
    expect(bearerChallenge("Bearer")).toEqual({});
  });

  it("never throws on malformed input and keeps what it could read", () => {
    expect(bearerChallenge('Bearer scope="profile:read')).toEqual({ scope: "profile:read" });
    expect(() => bearerChallenge('=,,"Bearer ,=, x="')).not.toThrow();
  });
});
