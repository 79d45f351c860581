/**
 * The error classes of the client. Each is an `Error` subclass with `name` equal to the class name
 * (set as a string, so it survives minification), a stable `code`, and `cause`.
 *
 * Two families, one base ({@link TenantClientError}):
 * - returned as `error` for every non-2xx answer: {@link HttpError} and its subclasses
 *   {@link UnauthorizedError} (401), {@link ForbiddenError} / {@link InsufficientScopeError} (403),
 *   {@link RateLimitError} (429) and {@link ServerError} (5xx), each with `status`, `body` and `headers`;
 * - thrown when no answer can be returned: {@link NetworkError}, {@link TimeoutError},
 *   {@link PathOutsideApiError}, and `TenantClientError` itself for bad options or a bad token.
 *
 * None ever holds an access token: messages name only a method, a URL without its query and a
 * status; headers that carry credentials are dropped; a body or `cause` that mentions the token, in
 * any form, is replaced by a redacted copy (see `packages/internal/src/redact.ts`, the rule shared
 * with the token manager).
 *
 * @packageDocumentation
 */
import type { Scope } from "@tenant-integration/types";
import { formsOf, mentions, parseRetryAfter, redact, redactText } from "@tenant-integration/internal";
import { bearerChallenge } from "./www-authenticate.js";

/** Stable codes of {@link TenantClientError} and its subclasses. */
export type TenantClientErrorCode =
  | "INVALID_OPTIONS"
  | "INVALID_TOKEN"
  | "NETWORK_ERROR"
  | "ABORTED"
  | "TIMEOUT"
  | "HTTP_ERROR"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "INSUFFICIENT_SCOPE"
  | "RATE_LIMITED"
  | "SERVER_ERROR"
  | "PATH_OUTSIDE_API";

/**
 * A scope name: one of the service's known scopes, or any other string a server names.
 * Known names autocomplete; unknown ones still type-check.
 *
 * @see RFC 6749 §3.3 (scope)
 */
export type ScopeName = Scope | (string & {});

/**
 * The base class of every error this package throws or returns. Thrown as is with code
 * `INVALID_OPTIONS` by `createTenantClient` and the middleware factories for a bad option, `baseUrl`
 * included (the message names the option and says why; the token manager refuses the same
 * `baseUrl` with the same code and reason), and `INVALID_TOKEN` when the token source yields a
 * value outside the RFC 6750 `b64token` syntax. None echoes the value.
 *
 * @example
 * ```ts
 * try { await client.GET("/api/v1/auth/user"); }
 * catch (e) { if (e instanceof TenantClientError) console.error(e.code); }
 * ```
 * @see RFC 6750 §2.1 (`b64token`), §3 (error codes), §5.3 (TLS only)
 */
export class TenantClientError extends Error {
  /**
   * @param code - a stable, machine-readable code
   * @param message - a message that never contains a token
   * @param cause - the underlying error, if any
   * @param name - the class name (subclasses pass theirs)
   */
  constructor(
    readonly code: TenantClientErrorCode,
    message: string,
    cause?: unknown,
    name = "TenantClientError",
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = name;
  }
}

/** Response headers that carry credentials or session state: never kept on an {@link HttpError}. */
const CREDENTIAL_HEADERS = new Set(["authorization", "proxy-authorization", "set-cookie", "set-cookie2", "cookie"]);

/** What {@link HttpError} is made of. */
export interface HttpErrorInit<Body> {
  /** The HTTP status. */
  readonly status: number;
  /** The response body as openapi-fetch parsed it (JSON, else text; `undefined` when empty). */
  readonly body: Body;
  /** The response headers, names in lower case, without credential headers. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * A non-2xx answer, returned as `error` (never thrown): the base of the per-status classes, and
 * the class itself for every status without one (400, 404, 409, 422, a 3xx left unfollowed, …).
 * `body` is the parsed body (typed by the contract where it documents the status), `headers` a
 * record with lower-case names from which `authorization`, `proxy-authorization`, `cookie`,
 * `set-cookie` and any header whose value contains the request's token are dropped.
 *
 * `headers` is a plain record rather than a `Headers` object so that the error survives
 * `structuredClone` and JSON, and keeps its type through openapi-fetch's `Readable<…>` (as used by
 * openapi-react-query).
 *
 * @typeParam Body - the body type the contract gives the status (`unknown` if it gives none)
 * @example
 * ```ts
 * const { error } = await client.GET("/api/v1/auth/user");
 * if (error instanceof HttpError) console.log(error.status, error.code, error.headers["content-type"], error.body);
 * ```
 * @see RFC 9110 §15 (status codes)
 */
export class HttpError<Body = unknown> extends TenantClientError {
  /** The HTTP status. */
  readonly status: number;
  /** The parsed response body (JSON, else text; `undefined` when empty), with any token redacted. */
  readonly body: Body;
  /** The response headers, lower-case names, without credentials. */
  readonly headers: Readonly<Record<string, string>>;

  /**
   * @param init - status, body and headers
   * @param code - the stable code (subclasses pass theirs; default `HTTP_ERROR`)
   * @param message - the message (default `HTTP <status>`)
   * @param name - the class name
   */
  constructor(
    init: HttpErrorInit<Body>,
    code: TenantClientErrorCode = "HTTP_ERROR",
    message = `HTTP ${init.status}`,
    name = "HttpError",
  ) {
    super(code, message, undefined, name);
    this.status = init.status;
    this.body = init.body;
    this.headers = init.headers;
  }
}

/**
 * 401 Unauthorized: the tenant did not accept the token as authenticated. Returned after the
 * client's one refresh-and-retry (through `auth.onUnauthorized`) did not help, or when the strategy
 * has no `onUnauthorized` (`staticToken`). That a missing, expired or revoked token is answered 401
 * is the contract's assumption (RFC 6750 §3.1): the service description says only that calls with
 * an expired token are no longer accepted as authenticated.
 *
 * @example
 * ```ts
 * if (error instanceof UnauthorizedError) await signInAgain();
 * ```
 * @see RFC 6750 §3.1 (`invalid_token`)
 */
export class UnauthorizedError<Body = unknown> extends HttpError<Body> {
  /** @param init - status (401), body and headers */
  constructor(init: HttpErrorInit<Body>) {
    super(init, "UNAUTHORIZED", "401 Unauthorized", "UnauthorizedError");
  }
}

/**
 * 403 Forbidden: the token lacks the scope the route requires (service description §5.9).
 * `requiredScope` lists the scope(s) the `WWW-Authenticate` Bearer challenge names, or is empty.
 * Assumed, not in the service description: that the challenge names them (RFC 6750 §3, §3.1), and
 * that holding any one of them suffices (the kit's reading of the list as the route's accepted
 * scopes, service description §5.9).
 *
 * @example
 * ```ts
 * const { error } = await client.GET("/api/v1/auth/user");
 * if (error instanceof ForbiddenError) askForScopes(error.requiredScope);
 * ```
 * @see RFC 6750 §3 (the challenge and its `scope` attribute)
 */
export class ForbiddenError<Body = unknown> extends HttpError<Body> {
  /**
   * @param init - status (403), body and headers
   * @param requiredScope - the scope(s) the challenge names; empty when none
   * @param code - `FORBIDDEN`, or `INSUFFICIENT_SCOPE` for the subclass
   * @param name - the class name
   */
  constructor(
    init: HttpErrorInit<Body>,
    readonly requiredScope: ScopeName[],
    code: "FORBIDDEN" | "INSUFFICIENT_SCOPE" = "FORBIDDEN",
    name = "ForbiddenError",
  ) {
    super(
      init,
      code,
      requiredScope.length > 0 ? `403 Forbidden: needs ${requiredScope.join(" or ")}` : "403 Forbidden",
      name,
    );
  }
}

/**
 * A {@link ForbiddenError} whose challenge says `error="insufficient_scope"`: the token is valid but
 * lacks the scope in `requiredScope`. Authorize again asking for it; retrying does not help.
 *
 * @example
 * ```ts
 * if (error instanceof InsufficientScopeError) reauthorize([...granted, ...error.requiredScope]);
 * ```
 * @see RFC 6750 §3.1 (`insufficient_scope`)
 */
export class InsufficientScopeError<Body = unknown> extends ForbiddenError<Body> {
  /**
   * @param init - status (403), body and headers
   * @param requiredScope - the scope(s) the challenge names
   */
  constructor(init: HttpErrorInit<Body>, requiredScope: ScopeName[]) {
    super(init, requiredScope, "INSUFFICIENT_SCOPE", "InsufficientScopeError");
  }
}

/**
 * 429 Too Many Requests, returned once the client's retries (if any) are used up or the server
 * asks to wait longer than `retry.maxDelayMs`. `retryAfterMs` is the `Retry-After` header (seconds
 * or an HTTP date) as milliseconds from when the answer was read, or `undefined` without one.
 *
 * @example
 * ```ts
 * if (error instanceof RateLimitError) setTimeout(again, error.retryAfterMs ?? 60_000);
 * ```
 * @see RFC 6585 §4 (429), RFC 9110 §10.2.3 (Retry-After)
 */
export class RateLimitError<Body = unknown> extends HttpError<Body> {
  /**
   * @param init - status (429), body and headers
   * @param retryAfterMs - the parsed `Retry-After`, in milliseconds
   */
  constructor(
    init: HttpErrorInit<Body>,
    readonly retryAfterMs: number | undefined,
  ) {
    super(
      init,
      "RATE_LIMITED",
      retryAfterMs === undefined ? "429 Too Many Requests" : `429 Too Many Requests: retry after ${retryAfterMs} ms`,
      "RateLimitError",
    );
  }
}

/**
 * A 5xx answer, returned once the client's retries (if any) are used up (501 and 505 are never
 * retried: they cannot succeed later).
 *
 * @example
 * ```ts
 * if (error instanceof ServerError) report(error.status);
 * ```
 * @see RFC 9110 §15.6 (server errors)
 */
export class ServerError<Body = unknown> extends HttpError<Body> {
  /** @param init - status (500-599), body and headers */
  constructor(init: HttpErrorInit<Body>) {
    super(init, "SERVER_ERROR", `HTTP ${init.status}`, "ServerError");
  }
}

/**
 * Internal: the error value of a non-2xx answer, of the class its status calls for, with credential
 * headers dropped and the tokens in `secrets` (those the request carried) removed from headers and body.
 *
 * @param response - the answer
 * @param body - the body as openapi-fetch parsed it
 * @param secrets - the token(s) the request carried
 * @param now - the time in ms since the epoch, to read a `Retry-After` date
 */
export function httpErrorFrom(
  response: Response,
  body: unknown,
  secrets: readonly (string | undefined)[],
  now: number,
): HttpError {
  const forms = formsOf(secrets);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!CREDENTIAL_HEADERS.has(name) && !mentions(value, forms)) headers[name] = value;
  });
  const init: HttpErrorInit<unknown> = { status: response.status, body: redact(body, secrets), headers };
  switch (response.status) {
    case 401:
      return new UnauthorizedError(init);
    case 403: {
      const challenge = bearerChallenge(response.headers.get("www-authenticate"));
      const scope = challenge?.["scope"]?.split(/[ \t]+/).filter((s) => s.length > 0) ?? [];
      return challenge?.["error"] === "insufficient_scope"
        ? new InsufficientScopeError(init, scope)
        : new ForbiddenError(init, scope);
    }
    case 429:
      return new RateLimitError(init, parseRetryAfter(response.headers.get("retry-after"), now));
    default:
      return response.status >= 500 && response.status <= 599 ? new ServerError(init) : new HttpError(init);
  }
}

/** A request's method and URL, the parts of a `Request` an error keeps. */
export interface RequestLine {
  readonly method: string;
  readonly url: string;
}

/**
 * A request could not be completed: the connection failed or was aborted (also during a retry).
 * `code` is `ABORTED` when the request's signal was aborted, `TIMEOUT` for a
 * {@link TimeoutError}, else `NETWORK_ERROR`. HTTP statuses never throw.
 *
 * @example
 * ```ts
 * try { await client.GET("/api/v1/auth/user"); }
 * catch (e) { if (e instanceof NetworkError && e.code === "NETWORK_ERROR") retryLater(); }
 * ```
 * @see RFC 9110 §9.2.2 (only idempotent requests are safe to repeat after a failure)
 * @see RFC 6750 §5.1 (tokens must not leak through error reports)
 */
export class NetworkError extends TenantClientError {
  /** The request method. */
  readonly method: string;
  /** The request URL without its query and fragment. */
  readonly url: string;

  /**
   * @param request - the request that failed; only its method and URL path are kept
   * @param cause - the original error; a redacted copy if it mentions the token in any form, at any depth
   * @param secrets - the token(s) to remove from `cause` (default: the request's bearer token)
   * @param code - the code (subclasses pass theirs; default: `ABORTED` or `NETWORK_ERROR` from the cause)
   * @param name - the class name
   */
  constructor(
    request: RequestLine | Request,
    cause: unknown,
    secrets: readonly (string | undefined)[] = [request instanceof Request ? bearerTokenOf(request) : undefined],
    code?: TenantClientErrorCode,
    name = "NetworkError",
  ) {
    const url = redactText(request.url.replace(/[?#][^]*/, ""), formsOf(secrets));
    const aborted =
      (cause as Error | null)?.name === "AbortError" || (request instanceof Request && request.signal.aborted);
    const resolved = code ?? (aborted ? "ABORTED" : "NETWORK_ERROR");
    super(
      resolved,
      `${request.method} ${url} ${resolved === "TIMEOUT" ? "timed out" : "failed"}`,
      redact(cause, secrets),
      name,
    );
    this.method = request.method;
    this.url = url;
  }
}

/**
 * The request took longer than its timeout (the client's `timeout`, or a per-request one, made by `timeoutAfter`), or
 * its own signal aborted with a `TimeoutError`. Thrown; code `TIMEOUT`. A timeout that fires while
 * the client waits before a retry returns the last answer instead, since there is one.
 *
 * @example
 * ```ts
 * try { await client.GET("/api/v1/auth/user", { timeout: timeoutAfter(5_000) }); }
 * catch (e) { if (e instanceof TimeoutError) showSlowNetworkHint(); }
 * ```
 * @see RFC 9110 §9.2.2 (whether a timed-out request may be repeated)
 */
export class TimeoutError extends NetworkError {
  /**
   * @param request - the request (method and URL; the query is dropped)
   * @param cause - the abort reason or the fetch error, redacted like {@link NetworkError}'s
   * @param secrets - the token(s) to remove from `cause`
   */
  constructor(request: RequestLine | Request, cause: unknown, secrets?: readonly (string | undefined)[]) {
    super(request, cause, secrets, "TIMEOUT", "TimeoutError");
  }
}

/**
 * `client.raw` was asked for a URL outside `/api/v1` of the tenant (another origin, an OAuth
 * endpoint, or a path that normalizes out, like `/api/v1/../oauth/token`). Nothing is sent.
 *
 * @example
 * ```ts
 * await client.raw.GET("/oauth/token" as "/api/v1/x"); // rejects with PathOutsideApiError
 * ```
 * @see RFC 3986 §5.2.4 (dot-segment removal, applied before the check)
 */
export class PathOutsideApiError extends TenantClientError {
  /** @param url - the refused URL; only its path is kept */
  constructor(url: string) {
    super("PATH_OUTSIDE_API", `${url.replace(/[?#][^]*/, "")} is outside /api/v1`, undefined, "PathOutsideApiError");
  }
}

/** Internal: the token of an `Authorization: Bearer <token>` header (scheme case-insensitive). */
export function bearerTokenOf(request: Request): string | undefined {
  return /^bearer +(\S+)/i.exec(request.headers.get("authorization") ?? "")?.[1];
}
