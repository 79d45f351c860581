/**
 * The error classes of the client. Each is an `Error` subclass with `name` equal to the class name
 * (set as a string, so it survives minification), a stable `code`, and `cause`.
 *
 * None ever holds an access token: messages name only a method and a URL without its query, and a
 * `cause` that mentions the token is replaced by a redacted copy.
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
 *
 * @see RFC 6749 §3.3 (scope)
 */
export type ScopeName = Scope | (string & {});

/**
 * The base class of every error this package throws or returns. Thrown as is with code
 * `INVALID_BASE_URL` by `createTenantClient` and the middleware factories when `baseUrl` is not
 * `https:` (`http:` only on a loopback host: `localhost`, 127.0.0.0/8, `[::1]`) or has credentials,
 * a query or a fragment; and with code `INVALID_TOKEN` when the auth strategy yields a value outside
 * the RFC 6750 `b64token` syntax. Neither echoes the value.
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

/**
 * A request could not be completed: the connection failed, timed out or was aborted (also during a
 * retry). `code` is `TIMEOUT` for a `TimeoutError`, `ABORTED` when the request was aborted, else
 * `NETWORK_ERROR`. HTTP statuses never throw.
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
   * @param cause - the original error, replaced by a redacted copy if it mentions the request's token
   */
  constructor(request: Request, cause: unknown) {
    const url = request.url.replace(/[?#][^]*/, "");
    const name = (cause as Error | null)?.name;
    super(
      name === "TimeoutError" ? "TIMEOUT" : name === "AbortError" || request.signal.aborted ? "ABORTED" : "NETWORK_ERROR",
      `${request.method} ${url} failed`,
      redact(cause, bearerTokenOf(request)),
      "NetworkError",
    );
    this.method = request.method;
    this.url = url;
  }
}

/**
 * The server answered 403 Forbidden. Returned as `error` (in place of the parsed body, kept as
 * `body`); never thrown. `requiredScope` lists the scope(s) the `WWW-Authenticate` Bearer challenge
 * names (any one suffices), or is empty.
 *
 * @example
 * ```ts
 * const { error } = await client.GET("/api/v1/auth/user");
 * if (error instanceof ForbiddenError) askForScopes(error.requiredScope);
 * ```
 * @see RFC 6750 §3 (the challenge and its `scope` attribute)
 */
export class ForbiddenError extends TenantClientError {
  /** Always 403. */
  readonly status = 403 as const;

  /**
   * @param requiredScope - the scope(s) the challenge names; empty when none
   * @param body - the response body as openapi-fetch parsed it
   * @param code - `FORBIDDEN`, or `INSUFFICIENT_SCOPE` for the subclass
   * @param name - the class name
   */
  constructor(
    readonly requiredScope: readonly ScopeName[],
    readonly body: unknown,
    code: "FORBIDDEN" | "INSUFFICIENT_SCOPE" = "FORBIDDEN",
    name = "ForbiddenError",
  ) {
    super(code, requiredScope.length ? `Forbidden: needs ${requiredScope.join(" or ")}` : "Forbidden", undefined, name);
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
export class InsufficientScopeError extends ForbiddenError {
  /**
   * @param requiredScope - the scope(s) the challenge names
   * @param body - the parsed response body
   */
  constructor(requiredScope: readonly ScopeName[], body: unknown) {
    super(requiredScope, body, "INSUFFICIENT_SCOPE", "InsufficientScopeError");
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

/** Returns `cause` unchanged unless it mentions `secret` anywhere; then a redacted copy. */
function redact(cause: unknown, secret: string | undefined): unknown {
  if (!secret) return cause;
  const c = cause as Error | undefined;
  let text: string;
  try {
    text = `${c?.stack}${c?.cause}${JSON.stringify(cause)}${cause}`;
  } catch {
    text = secret;
  }
  if (!text.includes(secret)) return cause;
  const copy = new Error(String(c?.message ?? cause).split(secret).join("[redacted]"));
  copy.name = c?.name ?? "Error";
  return copy;
}
