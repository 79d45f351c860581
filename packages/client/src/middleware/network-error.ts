import type { Middleware } from "openapi-fetch";
import { coreMiddleware } from "./core.js";

/**
 * Middleware that turns a rejected fetch (connection refused or reset, DNS failure, abort, timeout)
 * into a thrown {@link NetworkError} with code `NETWORK_ERROR` or `ABORTED` (a {@link TimeoutError}, code `TIMEOUT`, for a timeout) and the
 * original error as `cause` (a redacted copy if it mentions the request's token). HTTP statuses
 * never throw. Register it first, so that it sees what every other middleware passes on.
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
  return coreMiddleware({ prefix: undefined, parts: { network: true } });
}
