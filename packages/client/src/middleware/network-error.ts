/**
 * The network concern: a fetch that got no answer (connection refused or reset, DNS failure, abort,
 * timeout) becomes a thrown {@link NetworkError}, its cause redacted. HTTP statuses never throw.
 *
 * @see RFC 6750 §5.1 (tokens must not leak through logs or error reports)
 */
import type { Middleware } from "openapi-fetch";
import { NetworkError, TenantClientError, TimeoutError } from "../errors.js";

/** The error for a fetch of `request` that failed with `cause`: a {@link TimeoutError} when a timeout aborted it. */
export function networkError(request: Request, cause: unknown): NetworkError {
  const timedOut =
    (cause as Error | null)?.name === "TimeoutError" ||
    (request.signal.reason as Error | undefined)?.name === "TimeoutError";
  return timedOut ? new TimeoutError(request, cause) : new NetworkError(request, cause);
}

/** `onError` of {@link networkErrorMiddleware}: the client's own errors pass as they are. */
function typedFailure({ request, error }: { request: Request; error: unknown }): Error {
  return error instanceof TenantClientError ? error : networkError(request, error);
}

/**
 * Middleware that turns a rejected fetch (connection refused or reset, DNS failure, abort, timeout)
 * into a thrown {@link NetworkError} with code `NETWORK_ERROR` or `ABORTED` (a {@link TimeoutError}, code `TIMEOUT`, for a timeout) and the
 * original error as `cause` (a redacted copy if it mentions the request's token). HTTP statuses
 * never throw. Register it first, so that it sees what every other middleware passes on. (The
 * tenant client does this itself.)
 *
 * @returns an openapi-fetch middleware
 * @example
 * ```ts
 * client.use(networkErrorMiddleware());
 * try { await client.GET("/api/v1/auth/user"); }
 * catch (e) { if (e instanceof NetworkError) console.error(e.code); }
 * ```
 * @see RFC 6750 §5.1 (tokens must not leak through logs or error reports)
 */
export function networkErrorMiddleware(): Middleware {
  return { onError: typedFailure };
}
