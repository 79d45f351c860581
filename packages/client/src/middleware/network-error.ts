import type { Middleware } from "openapi-fetch";
import { NetworkError, TenantClientError } from "../errors.js";
import { bearerTokenOf } from "../internal/replay.js";

/**
 * Middleware that turns a rejected fetch (connection refused or reset, DNS failure, abort,
 * timeout) into a {@link NetworkError} with a stable `code` (`NETWORK_ERROR`, `ABORTED`, `TIMEOUT`)
 * and the original error as `cause`. If the original error mentions the request's bearer token, the
 * cause is replaced by a redacted copy. openapi-fetch then throws it; HTTP statuses never throw.
 *
 * Register it first, so that it sees the errors every other middleware passes on.
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
  return {
    onError({ request, error }) {
      if (error instanceof TenantClientError) return error;
      return new NetworkError(request, error, bearerTokenOf(request));
    },
  };
}
