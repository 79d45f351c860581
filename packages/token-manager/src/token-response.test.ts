import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TokenManagerError } from "./errors.js";
import { parseOAuthError, parseTokenResponse } from "./token-response.js";

const valid = { access_token: "at_1", refresh_token: "rt_1", token_type: "Bearer", expires_in: 900 };

function outcome(body: unknown, requireRefresh = false): "ok" | "invalid" {
  try {
    parseTokenResponse(body, requireRefresh ? undefined : "rt_previous");
    return "ok";
  } catch (e) {
    if (e instanceof TokenManagerError && e.code === "INVALID_RESPONSE") return "invalid";
    throw e;
  }
}

describe("parseTokenResponse", () => {
  it("accepts the contract's issued and rotated examples, as text or as a value", () => {
    expect(parseTokenResponse(JSON.stringify(valid))).toMatchObject(valid);
    expect(parseTokenResponse({ ...valid, token_type: "bearer", scope: "profile:read" })).toMatchObject({
      scope: "profile:read",
    });
  });

  it("accepts a refresh response without refresh_token, but not a code exchange response", () => {
    const { refresh_token: _, ...withoutRefresh } = valid;
    expect(outcome(withoutRefresh)).toBe("ok");
    expect(outcome(withoutRefresh, true)).toBe("invalid");
  });

  it.each([
    ["an HTML error page", "<!doctype html><title>502 Bad Gateway</title>"],
    ["empty text", ""],
    ["JSON null", "null"],
    ["a JSON array", "[]"],
    ["a JSON string", '"at_1"'],
    ["a missing access_token", { ...valid, access_token: undefined }],
    ["an empty access_token", { ...valid, access_token: "" }],
    ["a numeric access_token", { ...valid, access_token: 12 }],
    ["an access_token with a newline", { ...valid, access_token: "at\n1" }],
    ["a null refresh_token", { ...valid, refresh_token: null }],
    ["a numeric refresh_token", { ...valid, refresh_token: 1 }],
    ["a missing token_type", { ...valid, token_type: undefined }],
    ["a token_type other than Bearer", { ...valid, token_type: "mac" }],
    ["a missing expires_in", { ...valid, expires_in: undefined }],
    ["expires_in as a string", { ...valid, expires_in: "900" }],
    ["expires_in zero", { ...valid, expires_in: 0 }],
    ["a negative expires_in", { ...valid, expires_in: -1 }],
    ["a numeric scope", { ...valid, scope: 1 }],
  ])("rejects %s with a typed error", (_name, body) => {
    expect(outcome(body, true)).toBe("invalid");
  });

  it("rejects non-finite expires_in values", () => {
    expect(outcome({ ...valid, expires_in: Number.POSITIVE_INFINITY })).toBe("invalid");
    expect(outcome({ ...valid, expires_in: Number.NaN })).toBe("invalid");
  });

  it("never names a token value in its message", () => {
    try {
      parseTokenResponse({ ...valid, access_token: "secret_canary\u0000" });
    } catch (e) {
      expect((e as Error).message).not.toContain("secret_canary");
    }
  });

  it("either accepts or throws INVALID_RESPONSE for any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, requireRefresh) => {
        outcome(value, requireRefresh);
        outcome(JSON.stringify(value), requireRefresh);
      }),
      { numRuns: 500 },
    );
  });

  it("either accepts or throws INVALID_RESPONSE for any object shaped like a token response", () => {
    const field = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.constant(null),
      fc.boolean(),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(
        fc.record({
          access_token: field,
          refresh_token: field,
          token_type: fc.oneof(field, fc.constant("Bearer")),
          expires_in: field,
          scope: field,
        }),
        (value) => {
          const result = outcome(value);
          if (result === "ok") {
            expect(typeof value.access_token).toBe("string");
            expect(typeof value.expires_in === "number" && value.expires_in > 0).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("either accepts or throws INVALID_RESPONSE for arbitrary bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(outcome(new TextDecoder().decode(bytes))).toBe("invalid");
      }),
      { numRuns: 500 },
    );
  });
});

describe("parseOAuthError", () => {
  it("reads error, error_description and error_uri of an RFC 6749 §5.2 body", () => {
    expect(
      parseOAuthError('{"error":"invalid_grant","error_description":"expired","error_uri":"https://x.test/e"}'),
    ).toEqual({
      error: "invalid_grant",
      errorDescription: "expired",
      errorUri: "https://x.test/e",
    });
  });

  it("returns undefined for anything else", () => {
    for (const body of ["<html>", "{}", '{"error":""}', '{"error":3}', "[]", "null"])
      expect(parseOAuthError(body)).toBeUndefined();
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const fields = parseOAuthError(v);
        if (fields) expect(typeof fields.error).toBe("string");
      }),
    );
  });
});
