import type { Middleware, MiddlewareCallbackParams } from "openapi-fetch";
import { createApiScope } from "../api-scope.js";
import type { AuthStrategy } from "../auth-strategy.js";
import { validateBaseUrl } from "../base-url.js";
import { InvalidTokenError } from "../errors.js";
import { B64TOKEN } from "../internal/b64token.js";
import { bearerTokenOf, captureBody, followIntent, rebuild, send, storedBody, discard } from "../internal/replay.js";

/** Options of {@link unauthorizedRetryMiddleware}. */
export interface UnauthorizedRetryMiddlewareOptions {
  /** The tenant's base URL; only 401s to requests under `<baseUrl>/api/v1` are retried. */
  readonly baseUrl: string;
  /** The strategy told about the rejected token and asked for a fresh one. */
  readonly auth: AuthStrategy;
}

/**
 * Middleware that answers a 401 to a request which carried a bearer token for the tenant's API:
 * it calls `auth.onUnauthorized(rejectedToken)` once, asks `auth.getAccessToken()` for a fresh
 * token and, if that token differs from the rejected one, sends the request once more with the
 * same method, headers and body (the body is buffered before the first send, only for requests
 * that have one). The second response is returned whatever it is, so a second 401 reaches the
 * caller as is. Requests without a bearer token, or outside the API, are never touched.
 *
 * The retry goes straight to the client's fetch, not through other middleware; it follows
 * same-origin redirects under the same rules as {@link bearerMiddleware}.
 *
 * @param options - the tenant base URL and the auth strategy
 * @returns an openapi-fetch middleware
 * @throws {@link InvalidBaseUrlError} (synchronously) for an unacceptable `baseUrl`
 * @throws {@link InvalidTokenError} (from the request) when the fresh token is outside `b64token`
 * @throws {@link NetworkError} (from the request) when the retry cannot be sent
 * @example
 * ```ts
 * client.use(unauthorizedRetryMiddleware({ baseUrl, auth }), bearerMiddleware({ baseUrl, auth }));
 * ```
 * @see RFC 6750 §3.1 (`invalid_token` is answered with 401)
 * @see RFC 6749 §6 (refreshing an access token)
 */
export function unauthorizedRetryMiddleware(options: UnauthorizedRetryMiddlewareOptions): Middleware {
  const scope = createApiScope(validateBaseUrl(options.baseUrl));
  const auth = options.auth;
  return {
    // synchronous on the hot path: no promise unless there is a body to keep or a 401 to answer
    onRequest(params) {
      if (params.request.body !== null && scope.contains(params.request.url)) return captureBody(params).then(() => undefined);
      return undefined;
    },
    onResponse(params) {
      if (params.response.status !== 401) return undefined;
      return answer401(params);
    },
  };

  async function answer401(params: MiddlewareCallbackParams & { response: Response }): Promise<Response | undefined> {
    const { request, response } = params;
    if (!scope.contains(request.url)) return undefined;
    const rejected = bearerTokenOf(request);
    if (rejected === undefined) return undefined;
    const body = storedBody(params);
    if (body === undefined) return undefined; // the body could not be kept: the 401 goes back as is
    await auth.onUnauthorized?.(rejected);
    const fresh = await auth.getAccessToken();
    if (typeof fresh !== "string" || !B64TOKEN.test(fresh)) throw new InvalidTokenError();
    if (fresh === rejected) return undefined; // the same token would be rejected again
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${fresh}`);
    discard(response);
    const follow = followIntent.has(request) || request.redirect === "follow";
    return send(params.options.fetch, rebuild(request, body, headers), body, follow, scope);
  }
}
