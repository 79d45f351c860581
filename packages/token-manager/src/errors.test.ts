import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type ErrorCode,
  OAuthResponseError,
  SessionEndedError,
  TokenManagerError,
  TransientError,
  fail,
} from "./errors.js";

describe("errors", () => {
  const cases: [TokenManagerError, string, ErrorCode][] = [
    [new TokenManagerError("STATE_MISMATCH", "x"), "TokenManagerError", "STATE_MISMATCH"],
    [new OAuthResponseError(400, { error: "invalid_request" }), "OAuthResponseError", "OAUTH_ERROR"],
    [new SessionEndedError(400, { error: "invalid_grant" }), "SessionEndedError", "SESSION_ENDED"],
    [new TransientError(503, 3), "TransientError", "TRANSIENT"],
  ];

  it.each(cases)("%s is an Error and a TokenManagerError with its class name and stable code", (error, name, code) => {
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(TokenManagerError);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(String(error)).toContain(name);
  });

  it("keeps a SessionEndedError an OAuthResponseError, so one branch can catch every endpoint refusal", () => {
    expect(new SessionEndedError(400, { error: "invalid_grant" })).toBeInstanceOf(OAuthResponseError);
  });

  it.each<ErrorCode>([
    "INVALID_OPTIONS",
    "INVALID_VERIFIER",
    "NO_PENDING_SIGN_IN",
    "STATE_MISSING",
    "STATE_MISMATCH",
    "STATE_EXPIRED",
    "INVALID_CALLBACK",
    "AUTHORIZATION_DENIED",
    "INVALID_RESPONSE",
    "NOT_SIGNED_IN",
    "STORAGE_FAILED",
  ])("fail(%s) throws the base class with the code, and the code then the detail as the message", (code) => {
    let thrown: unknown;
    try {
      fail(code, "detail");
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(TokenManagerError);
    expect(Object.getPrototypeOf(thrown)).toBe(TokenManagerError.prototype);
    expect(thrown).toMatchObject({ name: "TokenManagerError", code, message: `${code}: detail` });
  });

  it("writes a message without detail as the code alone, and copies extra fields", () => {
    expect(() => fail("NOT_SIGNED_IN")).toThrow(/^NOT_SIGNED_IN$/);
    let thrown: TokenManagerError | undefined;
    try {
      fail("AUTHORIZATION_DENIED", "access_denied", undefined, { error: "access_denied", errorDescription: "no" });
    } catch (e) {
      thrown = e as TokenManagerError;
    }
    expect(thrown).toMatchObject({ code: "AUTHORIZATION_DENIED", error: "access_denied", errorDescription: "no" });
  });

  it("keeps the cause", () => {
    const cause = new Error("disk full");
    expect(new TokenManagerError("STORAGE_FAILED", "storage failed", cause).cause).toBe(cause);
    expect(new TransientError(undefined, 1, cause).cause).toBe(cause);
    expect(() => fail("STORAGE_FAILED", "", cause)).toThrow(
      expect.objectContaining({ cause, message: "STORAGE_FAILED" }),
    );
  });

  it("parses RFC 6749 §5.2 fields onto OAuth errors and into the message", () => {
    const e = new OAuthResponseError(400, {
      error: "invalid_request",
      errorDescription: "bad body",
      errorUri: "https://x.test",
    });
    expect(e).toMatchObject({
      status: 400,
      error: "invalid_request",
      errorDescription: "bad body",
      errorUri: "https://x.test",
    });
    expect(e.message).toBe("HTTP 400: invalid_request (bad body)");
  });

  it("lets a caller tell a dead session from a passing failure", () => {
    const ended: unknown = new SessionEndedError(400, { error: "invalid_grant" });
    const transient: unknown = new TransientError(undefined, 3);
    expect(ended instanceof SessionEndedError && !(ended instanceof TransientError)).toBe(true);
    expect(transient instanceof TransientError && !(transient instanceof OAuthResponseError)).toBe(true);
    expect(new TransientError(undefined, 3)).toMatchObject({
      status: undefined,
      attempts: 3,
      message: "No answer (3 attempts)",
    });
  });

  it("types the code as a union of literals", () => {
    expectTypeOf(new TokenManagerError("NOT_SIGNED_IN", "x").code).toEqualTypeOf<ErrorCode>();
    // @ts-expect-error a code that does not exist does not compile
    new TokenManagerError("STATE_WRONG", "x");
  });
});
