import type { Middleware } from "openapi-fetch";
import { apiPrefix } from "../base-url.js";
import type { BearerMiddlewareOptions } from "./bearer.js";
import { coreMiddleware } from "./core.js";

/** Options of {@link unauthorizedRetryMiddleware}: the tenant base URL and the strategy told about rejected tokens. */
export type UnauthorizedRetryMiddlewareOptions = BearerMiddlewareOptions;

/**
 * Middleware that answers a 401 to a request that carried a bearer token for the tenant's API: it
 * calls `auth.onUnauthorized(rejectedToken)` once, asks `auth.getAccessToken()` again and, if the
 * token differs, sends the request once more with the same method, headers and body (the tenant
 * client keeps the serialized body; on a plain openapi-fetch client a copy is read before the first
 * send). A request with a streamed body (a `ReadableStream`) is not sent again: its 401 is returned.
 * A second 401 is returned as is. Other requests are untouched.
 * The retry goes straight to the client's fetch and, like {@link bearerMiddleware}, follows no
 * redirect: a 3xx comes back as it is.
 *
 * @param options - the tenant base URL and the token source
 * @returns an openapi-fetch middleware
 * @throws {@link TenantClientError} `INVALID_OPTIONS` (synchronously) for an unacceptable `baseUrl`
 * @throws {@link TenantClientError} `INVALID_TOKEN`, or {@link NetworkError} when the retry cannot be sent (from the request)
 * @example
 * ```ts
 * client.use(unauthorizedRetryMiddleware({ baseUrl, auth }), bearerMiddleware({ baseUrl, auth }));
 * ```
 * @see RFC 6750 §3.1 (`invalid_token` is answered with 401)
 * @see RFC 6749 §6 (refreshing an access token)
 */
export function unauthorizedRetryMiddleware(options: UnauthorizedRetryMiddlewareOptions): Middleware {
  return coreMiddleware({ prefix: apiPrefix(options.baseUrl), auth: options.auth, parts: { unauthorized: true } });
}
