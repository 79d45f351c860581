/**
 * The error classes of the client. Every one is an `Error` subclass whose `name` equals its class
 * name and whose `code` is stable, so callers can branch with `instanceof` or on `code`.
 *
 * None of them ever holds an access token: messages name a method and a URL without its query,
 * causes that mention the token are replaced by a redacted copy, and `toJSON()` prints only
 * `name`, `code` and `message`.
 *
 * @packageDocumentation
 */
import type { Scope } from "@tenant-integration/types";

/** Stable codes of {@link TenantClientError} and its subclasses. */
export type TenantClientErrorCode =
  | "INVALID_BASE_URL"
  | "INVALID_TOKEN"
  | "NETWORK_ERROR"
  | "ABORTED"
  | "TIMEOUT"
  | "FORBIDDEN"
  | "INSUFFICIENT_SCOPE"
  | "PATH_OUTSIDE_API";

/**
 * A scope name: one of the service's known scopes, or any other string a server names.
 * Known names autocomplete; unknown ones still type-check.
 */
export type ScopeName = Scope | (string & {});

/**
 * The base class of every error this package throws or returns.
 *
 * @example
 * ```ts
 * try { await client.GET("/api/v1/auth/user"); }
 * catch (e) { if (e instanceof TenantClientError) console.error(e.code); }
 * ```
 * @see RFC 6750 §3 (error codes of bearer-protected resources)
 */
export class TenantClientError extends Error {
  /** A stable, machine-readable code. */
  readonly code: TenantClientErrorCode;

  /**
   * @param code - the stable code
   * @param message - a message that never contains a token
   * @param options - `cause`, passed to `Error`
   */
  constructor(code: TenantClientErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }

  /** What `JSON.stringify` prints: `name`, `code` and `message`, never a cause or a header. */
  toJSON(): { name: string; code: TenantClientErrorCode; message: string } {
    return { name: this.name, code: this.code, message: this.message };
  }
}

/**
 * The `baseUrl` given to the client is not acceptable: it does not parse, it is not `https:`
 * (plain `http:` is allowed only on a loopback host: `localhost`, 127.0.0.0/8, `[::1]`), or it
 * carries credentials, a query or a fragment.
 *
 * @example
 * ```ts
 * try { createTenantClient({ baseUrl: "http://acme.example", auth }); }
 * catch (e) { if (e instanceof InvalidBaseUrlError) console.error(e.message); }
 * ```
 * @see RFC 6750 §5.3 (always use TLS for bearer tokens)
 */
export class InvalidBaseUrlError extends TenantClientError {
  /** @param reason - why the URL was refused; never echoes credentials */
  constructor(reason: string) {
    super("INVALID_BASE_URL", `Invalid baseUrl: ${reason}`);
  }
}

/**
 * The auth strategy returned something that cannot be sent as a bearer token: an empty string or
 * characters outside the `b64token` syntax. The value itself is never included.
 *
 * @example
 * ```ts
 * const { error } = await client.GET("/api/v1/auth/user").catch((e) => ({ error: e }));
 * if (error instanceof InvalidTokenError) reconnect();
 * ```
 * @see RFC 6750 §2.1 (the `b64token` syntax of the Authorization header)
 */
export class InvalidTokenError extends TenantClientError {
  constructor() {
    super("INVALID_TOKEN", "The auth strategy returned a value that is not a valid bearer token (RFC 6750 §2.1 b64token)");
  }
}

/**
 * A request could not be completed: the connection failed, was reset, timed out or was aborted.
 * Thrown by the client (HTTP statuses never throw). `code` is `ABORTED` when the request's signal
 * was aborted, `TIMEOUT` for a `TimeoutError`, and `NETWORK_ERROR` otherwise.
 *
 * @example
 * ```ts
 * try { await client.GET("/api/v1/auth/user"); }
 * catch (e) { if (e instanceof NetworkError && e.code === "NETWORK_ERROR") retryLater(); }
 * ```
 * @see RFC 9110 §9.2.2 (only idempotent requests are safe to repeat after a failure)
 */
export class NetworkError extends TenantClientError {
  /** The request method. */
  readonly method: string;
  /** The request URL without its query and fragment. */
  readonly url: string;

  /**
   * @param request - the request that failed; only its method and URL path are kept
   * @param cause - the original error, replaced by a redacted copy if it mentions `secret`
   * @param secret - the token the request carried, if any, so that it can be redacted
   */
  constructor(request: Request, cause: unknown, secret?: string) {
    const code = networkCode(cause, request);
    const url = stripQuery(request.url);
    super(code, `${request.method} ${url} failed: ${describe(cause, secret)}`, { cause: redactCause(cause, secret) });
    this.method = request.method;
    this.url = url;
  }
}

/**
 * The server answered 403 Forbidden (RFC 6750 §3.1). Returned as `error` in place of the parsed
 * body, which stays available as `body`. When the `WWW-Authenticate` challenge names the scope the
 * route requires, `requiredScope` lists it; otherwise it is empty.
 *
 * @example
 * ```ts
 * const { data, error } = await client.GET("/api/v1/auth/user");
 * if (error instanceof ForbiddenError) askForScopes(error.requiredScope);
 * ```
 * @see RFC 6750 §3 and §3.1 (`insufficient_scope`, the `scope` attribute)
 */
export class ForbiddenError extends TenantClientError {
  /** Always 403. */
  readonly status = 403 as const;
  /** The scope(s) the server says the route requires; any one of them suffices. Empty when not named. */
  readonly requiredScope: readonly ScopeName[];
  /** The `error` attribute of the bearer challenge (e.g. `insufficient_scope`), if any. */
  readonly challengeError: string | undefined;
  /** The `error_description` attribute of the bearer challenge, if any. */
  readonly errorDescription: string | undefined;
  /** The parsed response body (an open JSON object, or text), as openapi-fetch would have returned it. */
  readonly body: unknown;

  /**
   * @param init - what the 403 response said
   * @param code - `FORBIDDEN`, or `INSUFFICIENT_SCOPE` for the subclass
   */
  constructor(
    init: { requiredScope: readonly ScopeName[]; challengeError?: string | undefined; errorDescription?: string | undefined; body: unknown },
    code: "FORBIDDEN" | "INSUFFICIENT_SCOPE" = "FORBIDDEN",
  ) {
    super(
      code,
      init.requiredScope.length > 0
        ? `Forbidden: the route requires the scope ${init.requiredScope.join(" or ")}`
        : "Forbidden",
    );
    this.requiredScope = init.requiredScope;
    this.challengeError = init.challengeError;
    this.errorDescription = init.errorDescription;
    this.body = init.body;
  }

  /** What `JSON.stringify` prints. */
  override toJSON(): { name: string; code: TenantClientErrorCode; message: string; status: 403; requiredScope: readonly ScopeName[] } {
    return { ...super.toJSON(), status: this.status, requiredScope: this.requiredScope };
  }
}

/**
 * A {@link ForbiddenError} whose challenge says `error="insufficient_scope"`: the token is valid but
 * lacks the scope named in `requiredScope`. Ask the user to authorize again with that scope.
 *
 * @example
 * ```ts
 * if (error instanceof InsufficientScopeError) reauthorize([...granted, ...error.requiredScope]);
 * ```
 * @see RFC 6750 §3.1 (`insufficient_scope`)
 */
export class InsufficientScopeError extends ForbiddenError {
  /** @param init - what the 403 response said */
  constructor(init: { requiredScope: readonly ScopeName[]; errorDescription?: string | undefined; body: unknown }) {
    super({ ...init, challengeError: "insufficient_scope" }, "INSUFFICIENT_SCOPE");
  }
}

/**
 * The escape hatch (`client.raw`) was asked for a URL outside `/api/v1` of the tenant: another
 * origin, an OAuth endpoint, or a path that normalizes out of `/api/v1` (`/api/v1/../oauth/token`).
 * The request is never sent.
 *
 * @example
 * ```ts
 * await client.raw.GET("/oauth/token" as "/api/v1/x"); // rejects with PathOutsideApiError
 * ```
 * @see RFC 3986 §5.2.4 (dot-segment removal, which the check applies before comparing)
 */
export class PathOutsideApiError extends TenantClientError {
  /** @param url - the refused URL; only its path is kept */
  constructor(url: string) {
    super("PATH_OUTSIDE_API", `Refused: ${stripQuery(url)} is outside /api/v1 of the tenant`);
  }
}

function stripQuery(url: string): string {
  const q = url.search(/[?#]/);
  return q === -1 ? url : url.slice(0, q);
}

function errorName(cause: unknown): string | undefined {
  return typeof cause === "object" && cause !== null && "name" in cause && typeof cause.name === "string" ? cause.name : undefined;
}

function networkCode(cause: unknown, request: Request): "NETWORK_ERROR" | "ABORTED" | "TIMEOUT" {
  const name = errorName(cause);
  if (name === "TimeoutError") return "TIMEOUT";
  if (name === "AbortError" || request.signal.aborted) return "ABORTED";
  return "NETWORK_ERROR";
}

function describe(cause: unknown, secret: string | undefined): string {
  const text = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  return redactText(text, secret);
}

function redactText(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}

/** Returns `cause` unchanged unless it mentions the secret anywhere; then a redacted copy. */
function redactCause(cause: unknown, secret: string | undefined): unknown {
  if (!secret) return cause;
  let text: string;
  try {
    text = cause instanceof Error ? `${cause.message}\n${cause.stack ?? ""}\n${safeJson(cause)}\n${String((cause as { cause?: unknown }).cause)}` : safeJson(cause) + String(cause);
  } catch {
    text = secret;
  }
  if (!text.includes(secret)) return cause;
  const copy = new Error(redactText(cause instanceof Error ? cause.message : String(cause), secret));
  copy.name = errorName(cause) ?? "Error";
  return copy;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}
