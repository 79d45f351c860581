import { describe, expect, expectTypeOf, it } from "vitest";
import {
  AuthorizationDeniedError,
  CallbackError,
  ConfigurationError,
  InvalidResponseError,
  InvalidVerifierError,
  NotSignedInError,
  OAuthResponseError,
  SessionEndedError,
  StorageError,
  TokenManagerError,
  TransientError,
  type ErrorCode,
} from "./errors.js";

describe("errors", () => {
  const cases: [TokenManagerError, string, ErrorCode][] = [
    [new ConfigurationError("x"), "ConfigurationError", "INVALID_OPTIONS"],
    [new InvalidVerifierError(), "InvalidVerifierError", "INVALID_VERIFIER"],
    [new CallbackError("STATE_MISMATCH", "x"), "CallbackError", "STATE_MISMATCH"],
    [new AuthorizationDeniedError({ error: "access_denied" }), "AuthorizationDeniedError", "AUTHORIZATION_DENIED"],
    [new OAuthResponseError(400, { error: "invalid_request" }), "OAuthResponseError", "OAUTH_ERROR"],
    [new SessionEndedError(400, { error: "invalid_grant" }), "SessionEndedError", "SESSION_ENDED"],
    [new TransientError(503, 3), "TransientError", "TRANSIENT"],
    [new InvalidResponseError("x"), "InvalidResponseError", "INVALID_RESPONSE"],
    [new NotSignedInError(), "NotSignedInError", "NOT_SIGNED_IN"],
    [new StorageError(new Error("disk full")), "StorageError", "STORAGE_FAILED"],
  ];

  it.each(cases)("%s is an Error and a TokenManagerError with its class name and stable code", (error, name, code) => {
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(TokenManagerError);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(String(error)).toContain(name);
  });

  it("keeps the cause", () => {
    const cause = new Error("disk full");
    expect(new StorageError(cause).cause).toBe(cause);
    expect(new TransientError(undefined, 1, cause).cause).toBe(cause);
  });

  it("parses RFC 6749 §5.2 fields onto OAuth errors and into the message", () => {
    const e = new OAuthResponseError(400, { error: "invalid_request", errorDescription: "bad body", errorUri: "https://x.test" });
    expect(e).toMatchObject({ status: 400, error: "invalid_request", errorDescription: "bad body", errorUri: "https://x.test" });
    expect(e.message).toBe("HTTP 400: invalid_request (bad body)");
  });

  it("lets a caller tell a dead session from a passing failure", () => {
    const ended: unknown = new SessionEndedError(400, { error: "invalid_grant" });
    const transient: unknown = new TransientError(undefined, 3);
    expect(ended instanceof SessionEndedError && !(ended instanceof TransientError)).toBe(true);
    expect(transient instanceof TransientError && !(transient instanceof OAuthResponseError)).toBe(true);
    expect(new TransientError(undefined, 3)).toMatchObject({ status: undefined, attempts: 3 });
  });

  it("types the code as a union of literals", () => {
    expectTypeOf(new NotSignedInError().code).toEqualTypeOf<ErrorCode>();
    // @ts-expect-error a code that does not exist does not compile
    new CallbackError("STATE_WRONG", "x");
  });
});
