/**
 * Errors of the token manager: four classes, told apart further by a stable `code`. Every error is an
 * `Error` subclass whose `name` is its class name, whose `code` is one of {@link ErrorCode}, and whose
 * `cause` (when there is one) has been scrubbed of every token, code and verifier the manager knows.
 *
 * @see RFC 6749 §5.2 (error response)
 */

/**
 * The stable error codes, one string literal each (the type is a union, so a typo does not compile).
 * Branch on `error.code`, not on the message.
 *
 * | code | class | thrown when |
 * |---|---|---|
 * | `INVALID_OPTIONS` | {@link TokenManagerError} | an option of `createTokenManager` is invalid (e.g. `baseUrl` over http to a non-loopback host) |
 * | `INVALID_VERIFIER` | {@link TokenManagerError} | a PKCE verifier is not 43–128 characters of `A-Z a-z 0-9 - . _ ~` |
 * | `INVALID_SESSION_ID` | {@link TokenManagerError} | a session id is not 1–128 characters of `A-Z a-z 0-9 - . _ ~ @ + = \|` (spec/token-store/README.md, "The session id"); nothing was read or written |
 * | `NO_PENDING_SIGN_IN` | {@link TokenManagerError} | `completeAuthorization` found no pending sign-in (never begun, already used, cleared) |
 * | `STATE_MISSING` | {@link TokenManagerError} | the callback URL has no `state` |
 * | `STATE_MISMATCH` | {@link TokenManagerError} | the callback's `state` differs from the stored one, or the sign-in was started in another browser or for another session |
 * | `STATE_EXPIRED` | {@link TokenManagerError} | the pending sign-in outlived its lifetime |
 * | `INVALID_CALLBACK` | {@link TokenManagerError} | the callback is not a URL, not at the redirect URI, repeats `state`, `code` or `error`, or has no `code`; the Node loopback receiver closed before one arrived |
 * | `CALLBACK_TIMEOUT` | {@link TokenManagerError} | no callback reached the Node loopback receiver in time (the message names the redirect URI and says what to check) |
 * | `CALLBACK_PORT_IN_USE` | {@link TokenManagerError} | the Node loopback receiver's port is taken by another program; `port` is set |
 * | `REDIRECT_URI_REFUSED` | {@link TokenManagerError} | the tenant showed an error page for the authorize request instead of redirecting (by the kit's assumption, RFC 6749 §4.1.2.1: the redirect URI or client id is not registered); `status` is set |
 * | `AUTHORIZATION_DENIED` | {@link TokenManagerError} | the callback carries `error` (e.g. `access_denied`); `error`, `errorDescription`, `errorUri` are set |
 * | `OAUTH_ERROR` | {@link OAuthResponseError} | the token or revocation endpoint answered an RFC 6749 §5.2 error |
 * | `SESSION_ENDED` | {@link SessionEndedError} | the refresh token was refused with `invalid_grant` (taken as the session's end: RFC 6749 §5.2; the service description does not show its error codes); tokens cleared |
 * | `TRANSIENT` | {@link TransientError} | network error, timeout, 429 or 5xx (after the refresh retries); tokens kept |
 * | `INVALID_RESPONSE` | {@link TokenManagerError} | the endpoint answered something that is not a valid response; nothing stored |
 * | `NOT_SIGNED_IN` | {@link TokenManagerError} | there are no tokens |
 * | `STORAGE_FAILED` | {@link TokenManagerError} | the storage failed; tokens whose write failed stay usable in the process (a refresh reports it with the `storage-failed` event instead) |
 *
 * @example
 * ```ts
 * try { await tm.getAccessToken(); } catch (e) {
 *   if (e instanceof TokenManagerError && e.code === "NOT_SIGNED_IN") showSignIn();
 * }
 * ```
 * @see RFC 6749 §5.2
 */
export type ErrorCode =
  | "INVALID_OPTIONS"
  | "INVALID_VERIFIER"
  | "INVALID_SESSION_ID"
  | "NO_PENDING_SIGN_IN"
  | "STATE_MISSING"
  | "STATE_MISMATCH"
  | "STATE_EXPIRED"
  | "INVALID_CALLBACK"
  | "CALLBACK_TIMEOUT"
  | "CALLBACK_PORT_IN_USE"
  | "REDIRECT_URI_REFUSED"
  | "AUTHORIZATION_DENIED"
  | "OAUTH_ERROR"
  | "SESSION_ENDED"
  | "TRANSIENT"
  | "INVALID_RESPONSE"
  | "NOT_SIGNED_IN"
  | "STORAGE_FAILED";

/** Fields of an RFC 6749 §5.2 error body (or of an RFC 6749 §4.1.2.1 error callback). */
export interface OAuthErrorFields {
  /** The RFC 6749 §5.2 `error` code, e.g. `invalid_grant`. */
  readonly error: string;
  /** The server's `error_description`, if any. */
  readonly errorDescription?: string;
  /** The server's `error_uri`, if any. */
  readonly errorUri?: string;
}

/**
 * The base class of every error this package throws, and the class thrown directly for every failure
 * that is not an endpoint's answer: an invalid option (`INVALID_OPTIONS`) or verifier
 * (`INVALID_VERIFIER`), a rejected callback (`NO_PENDING_SIGN_IN`, `STATE_MISSING`, `STATE_MISMATCH`,
 * `STATE_EXPIRED`, `INVALID_CALLBACK`, `AUTHORIZATION_DENIED`), an invalid response
 * (`INVALID_RESPONSE`), no tokens (`NOT_SIGNED_IN`) and a failed storage (`STORAGE_FAILED`, with the
 * scrubbed storage error as `cause`). Branch on {@link TokenManagerError.code}.
 *
 * @example
 * ```ts
 * try { await tm.completeAuthorization(location.href); } catch (e) {
 *   if (e instanceof TokenManagerError && e.code === "STATE_MISMATCH") restartSignIn();
 *   if (e instanceof TokenManagerError && e.code === "AUTHORIZATION_DENIED") console.log(e.error); // "access_denied"
 * }
 * ```
 * @see RFC 6749 §4.1.2.1 (error callback), §5.2, §10.12 (state); RFC 7636 §4.1 (verifier); RFC 8252 §8.3 (loopback)
 */
export class TokenManagerError extends Error {
  // Literal names, not `new.target.name`: minifiers rename classes.
  override name = "TokenManagerError";
  /** The stable code; see {@link ErrorCode}. */
  declare readonly code: ErrorCode;
  /** With `AUTHORIZATION_DENIED` (and on {@link OAuthResponseError}): the RFC 6749 §5.2 `error`, e.g. `access_denied`. */
  declare readonly error?: string;
  /** With `AUTHORIZATION_DENIED` (and on {@link OAuthResponseError}): the `error_description`, if any. */
  declare readonly errorDescription?: string;
  /** With `AUTHORIZATION_DENIED` (and on {@link OAuthResponseError}): the `error_uri`, if any. */
  declare readonly errorUri?: string;
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
  constructor(status: number, fields: OAuthErrorFields, code: ErrorCode = "OAUTH_ERROR") {
    super(code, "HTTP " + status + ": " + describe(fields), undefined, { ...fields, status });
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
  /**
   * The last answer's `Retry-After` (429 or 503), in milliseconds, when it asked for longer than the
   * manager waits before a retry (10 s): not retried, try again after this. `undefined` otherwise.
   * @see RFC 9110 §10.2.3
   */
  declare readonly retryAfterMs: number | undefined;
  constructor(status: number | undefined, attempts: number, cause?: unknown, retryAfterMs?: number) {
    const after = retryAfterMs === undefined ? "" : `; retry after ${Math.ceil(retryAfterMs / 1000)} s`;
    super("TRANSIENT", (status ? "HTTP " + status : "No answer") + ` (${attempts} attempts)${after}`, cause, {
      status,
      attempts,
      retryAfterMs,
    });
  }
}

/**
 * Throws a {@link TokenManagerError} whose message is the code, then `detail` where one helps (e.g.
 * `STATE_MISMATCH`, `INVALID_OPTIONS: baseUrl`). Internal: one call site per failure keeps the bundle small.
 *
 * @example
 * ```ts
 * fail("INVALID_OPTIONS", "clientId"); // TokenManagerError: INVALID_OPTIONS: clientId
 * ```
 * @see RFC 6749 §5.2
 */
export function fail(code: ErrorCode, detail?: string, cause?: unknown, fields?: object): never {
  throw new TokenManagerError(code, detail ? code + ": " + detail : code, cause, fields);
}

/** `error (error_description)`, for messages. */
export const describe = (f: OAuthErrorFields): string =>
  f.error + (f.errorDescription ? ` (${f.errorDescription})` : "");
