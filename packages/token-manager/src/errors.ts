/**
 * Errors of the token manager. Every error is an `Error` subclass whose `name` is its class name,
 * whose `code` is one of {@link ErrorCode}, and whose `cause` (when there is one) has been scrubbed of
 * every token, code and verifier the manager knows.
 *
 * @see RFC 6749 §5.2 (error response)
 */

/**
 * The stable error codes, one string literal each (the type is a union, so a typo does not compile).
 * Branch on `error.code`, not on the message.
 *
 * | code | thrown when |
 * |---|---|
 * | `INVALID_OPTIONS` | an option of `createTokenManager` is invalid (e.g. `baseUrl` over http to a non-loopback host) |
 * | `INVALID_VERIFIER` | a PKCE verifier is not 43–128 characters of `A-Z a-z 0-9 - . _ ~` |
 * | `NO_PENDING_SIGN_IN` | `completeAuthorization` found no pending sign-in (never begun, already used, cleared) |
 * | `STATE_MISSING` | the callback URL has no `state` |
 * | `STATE_MISMATCH` | the callback's `state` differs from the stored one |
 * | `STATE_EXPIRED` | the pending sign-in outlived its lifetime |
 * | `INVALID_CALLBACK` | the callback is not a URL, not at the redirect URI, repeats `state`, `code` or `error`, or has no `code`; no callback arrived (Node loopback) |
 * | `AUTHORIZATION_DENIED` | the callback carries `error` (e.g. `access_denied`) |
 * | `OAUTH_ERROR` | the token or revocation endpoint answered an RFC 6749 §5.2 error |
 * | `SESSION_ENDED` | the refresh token was refused with `invalid_grant`; tokens cleared |
 * | `TRANSIENT` | network error, timeout, 429 or 5xx (after the refresh retries); tokens kept |
 * | `INVALID_RESPONSE` | the endpoint answered something that is not a valid response; nothing stored |
 * | `NOT_SIGNED_IN` | there are no tokens |
 * | `STORAGE_FAILED` | the storage failed; no unpersisted token was handed out |
 *
 * @example
 * ```ts
 * try { await tm.getAccessToken(); } catch (e) {
 *   if (e instanceof TokenManagerError && e.code === "SESSION_ENDED") showSignIn();
 * }
 * ```
 * @see RFC 6749 §5.2
 */
export type ErrorCode =
  | "INVALID_OPTIONS"
  | "INVALID_VERIFIER"
  | "NO_PENDING_SIGN_IN"
  | "STATE_MISSING"
  | "STATE_MISMATCH"
  | "STATE_EXPIRED"
  | "INVALID_CALLBACK"
  | "AUTHORIZATION_DENIED"
  | "OAUTH_ERROR"
  | "SESSION_ENDED"
  | "TRANSIENT"
  | "INVALID_RESPONSE"
  | "NOT_SIGNED_IN"
  | "STORAGE_FAILED";

/**
 * The base class of every error this package throws.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof TokenManagerError) console.error(e.code, e.message); }
 * ```
 * @see RFC 6749 §5.2
 */
export class TokenManagerError extends Error {
  // Literal names, not `new.target.name`: minifiers rename classes.
  override name = "TokenManagerError";
  /** The stable code; see {@link ErrorCode}. */
  declare readonly code: ErrorCode;
  /**
   * @param code - the stable code
   * @param message - a message that names no token, code or verifier
   * @param cause - an already scrubbed cause
   * @param fields - more fields of the error, such as `status`
   */
  constructor(code: ErrorCode, message: string, cause?: unknown, fields?: object) {
    super(message, (cause && { cause }) as ErrorOptions);
    Object.assign(this, fields, { code });
  }
}

/**
 * An option of `createTokenManager` is invalid. Thrown synchronously by `createTokenManager`.
 *
 * @example
 * ```ts
 * createTokenManager({ baseUrl: "http://tenant.example", ... }); // throws ConfigurationError
 * ```
 * @see RFC 8252 §8.3 (loopback), OAuth 2.0 Security BCP §4.1 (tokens only to the intended host)
 */
export class ConfigurationError extends TokenManagerError {
  override name = "ConfigurationError";
  constructor(message: string) {
    super("INVALID_OPTIONS", message);
  }
}

/**
 * A code verifier breaks RFC 7636 §4.1. The message never contains the verifier.
 *
 * @example
 * ```ts
 * await deriveCodeChallenge("short"); // rejects with InvalidVerifierError
 * ```
 * @see RFC 7636 §4.1
 */
export class InvalidVerifierError extends TokenManagerError {
  override name = "InvalidVerifierError";
  constructor() {
    super("INVALID_VERIFIER", "Invalid verifier");
  }
}

/**
 * The authorization callback was rejected before any request was sent: no pending sign-in, a missing,
 * different or expired `state`, a missing `code`, a callback not at the redirect URI, or one that
 * repeats `state`, `code` or `error`.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof CallbackError && e.code === "STATE_MISMATCH") restartSignIn(); }
 * ```
 * @see RFC 6749 §10.12 (CSRF), §4.1.2, §3.1.2 (redirect URI); RFC 9700 §4.4 (mix-up)
 */
export class CallbackError extends TokenManagerError {
  override name = "CallbackError";
}

/** Fields of an RFC 6749 §5.2 error body. */
export interface OAuthErrorFields {
  /** The RFC 6749 §5.2 `error` code, e.g. `invalid_grant`. */
  readonly error: string;
  /** The server's `error_description`, if any. */
  readonly errorDescription?: string;
  /** The server's `error_uri`, if any. */
  readonly errorUri?: string;
}

/**
 * The user or the server refused the authorization: the callback carried `error` (such as
 * `access_denied`). No request was sent.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof AuthorizationDeniedError) console.log(e.error); } // "access_denied"
 * ```
 * @see RFC 6749 §4.1.2.1
 */
export class AuthorizationDeniedError extends TokenManagerError implements OAuthErrorFields {
  override name = "AuthorizationDeniedError";
  declare readonly error: string;
  declare readonly errorDescription?: string;
  declare readonly errorUri?: string;
  constructor(fields: OAuthErrorFields) {
    super("AUTHORIZATION_DENIED", describe("Denied", fields), undefined, fields);
  }
}

/**
 * The token or revocation endpoint answered with an RFC 6749 §5.2 error body. Tokens are kept.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof OAuthResponseError) console.log(e.status, e.error, e.errorDescription); }
 * ```
 * @see RFC 6749 §5.2, RFC 7009 §2.2.1
 */
export class OAuthResponseError extends TokenManagerError implements OAuthErrorFields {
  override name = "OAuthResponseError";
  /** The HTTP status of the response. */
  declare readonly status: number;
  declare readonly error: string;
  declare readonly errorDescription?: string;
  declare readonly errorUri?: string;
  constructor(status: number, fields: OAuthErrorFields, code: ErrorCode = "OAUTH_ERROR") {
    super(code, describe(`HTTP ${status}`, fields), undefined, { ...fields, status });
  }
}

/**
 * The refresh token is dead (`invalid_grant`: expired, revoked or rotated away). The manager has
 * cleared its tokens and fired `session-ended`; the user must sign in again.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof SessionEndedError) location.assign((await tm.beginAuthorization()).url); }
 * ```
 * @see RFC 6749 §5.2 (`invalid_grant`), §6
 */
export class SessionEndedError extends OAuthResponseError {
  override name = "SessionEndedError";
  constructor(status: number, fields: OAuthErrorFields) {
    super(status, fields, "SESSION_ENDED");
  }
}

/**
 * A network error, a timeout, 429 or a 5xx answer, after the bounded retries of a refresh. Tokens are
 * kept; calling again later may succeed.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof TransientError) showOfflineBanner(); }
 * ```
 * @see RFC 6749 §6
 */
export class TransientError extends TokenManagerError {
  override name = "TransientError";
  /** The HTTP status of the last answer, or `undefined` when no answer came. */
  declare readonly status: number | undefined;
  /** How many requests were made. */
  declare readonly attempts: number;
  constructor(status: number | undefined, attempts: number, cause?: unknown) {
    super("TRANSIENT", `${status ? `HTTP ${status}` : "No answer"} (${attempts} attempts)`, cause, { status, attempts });
  }
}

/**
 * The endpoint answered something that is not a valid RFC 6749 §5.1 token response (not JSON, an HTML
 * page, a missing or mistyped field, a non-positive `expires_in`, a redirect). Nothing was stored.
 *
 * @example
 * ```ts
 * parseTokenResponse("<html>"); // throws InvalidResponseError
 * ```
 * @see RFC 6749 §5.1
 */
export class InvalidResponseError extends TokenManagerError {
  override name = "InvalidResponseError";
  constructor(message: string) {
    super("INVALID_RESPONSE", message);
  }
}

/**
 * There are no tokens: the user has not signed in, signed out, or the session ended.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof NotSignedInError) showSignInButton(); }
 * ```
 * @see RFC 6749 §4.1
 */
export class NotSignedInError extends TokenManagerError {
  override name = "NotSignedInError";
  constructor() {
    super("NOT_SIGNED_IN", "Not signed in");
  }
}

/**
 * The storage failed. When a write of new tokens fails, the new access token is not handed out; the
 * manager keeps the tokens in memory only to retry the write on the next call.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof StorageError) console.error("cannot save the session", e.cause); }
 * ```
 * @see RFC 6749 §10.3 (tokens kept confidential in storage)
 */
export class StorageError extends TokenManagerError {
  override name = "StorageError";
  constructor(cause: unknown) {
    super("STORAGE_FAILED", "Storage failed", cause);
  }
}

function describe(prefix: string, f: OAuthErrorFields): string {
  return `${prefix}: ${f.error}${f.errorDescription ? ` (${f.errorDescription})` : ""}`;
}
