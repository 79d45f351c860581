import type { Middleware, MiddlewareCallbackParams } from "openapi-fetch";
import { createApiScope } from "../api-scope.js";
import type { AuthStrategy } from "../auth-strategy.js";
import { validateBaseUrl } from "../base-url.js";
import { InvalidTokenError } from "../errors.js";
import { B64TOKEN } from "../internal/b64token.js";
import { captureBody, followIntent, followRedirects, storedBody } from "../internal/replay.js";

/** Options of {@link bearerMiddleware}. */
export interface BearerMiddlewareOptions {
  /** The tenant's base URL; only requests under `<baseUrl>/api/v1` get the token. Validated like the client's. */
  readonly baseUrl: string;
  /** Where tokens come from. */
  readonly auth: AuthStrategy;
}

/**
 * Middleware that adds `Authorization: Bearer <token>` to requests for the tenant's API, and only
 * to those: the request URL (after normalization) must have the tenant's origin and a path under
 * `/api/v1`. Requests to `/oauth/*`, to another origin (even given as an absolute URL) or out of
 * `/api/v1` by `..` segments are left untouched, and the strategy is not even asked for a token.
 *
 * Redirects: a request that carries the token is sent with `redirect: "manual"`. When the caller
 * wanted redirects followed (the default), this middleware follows same-origin redirects itself
 * (keeping the token only while the target stays under `/api/v1`) and returns a redirect to another
 * origin unfollowed, as its 3xx response. So the token never crosses to another origin, whatever
 * the fetch implementation does with `Authorization` on redirects. In browsers a manual redirect is
 * an opaque response (`type: "opaqueredirect"`, status 0) that cannot be followed; it is returned
 * as is. A caller who asks for `redirect: "manual"` gets every 3xx unfollowed.
 *
 * Register it after middleware that rewrites requests, so that it sees the final URL.
 *
 * @param options - the tenant base URL and the auth strategy
 * @returns an openapi-fetch middleware
 * @throws {@link InvalidBaseUrlError} (synchronously) for an unacceptable `baseUrl`
 * @throws {@link InvalidTokenError} (from the request) when the strategy yields a value outside `b64token`
 * @example
 * ```ts
 * import createClient from "openapi-fetch";
 * const client = createClient<paths>({ baseUrl: "https://acme.tenant.example" });
 * client.use(bearerMiddleware({ baseUrl: "https://acme.tenant.example", auth: staticToken(token) }));
 * ```
 * @see RFC 6750 §2.1 (the Authorization request header field)
 * @see RFC 6750 §5.2 and §5.3 (token redirect and TLS)
 * @see RFC 9110 §15.4 (redirection)
 */
export function bearerMiddleware(options: BearerMiddlewareOptions): Middleware {
  const scope = createApiScope(validateBaseUrl(options.baseUrl));
  const auth = options.auth;
  return {
    onRequest(params) {
      // no promise, no token lookup for requests that need no token
      if (!scope.contains(params.request.url)) return undefined;
      return authorize(params);
    },
    onResponse(params) {
      const { request, response } = params;
      if (response.status < 300 || response.status > 399 || !followIntent.has(request)) return undefined;
      return followRedirects(params.options.fetch, request, response, storedBody(params) ?? null, scope);
    },
  };

  async function authorize(params: MiddlewareCallbackParams): Promise<Request | undefined> {
    const request = params.request;
    const token = await auth.getAccessToken();
    if (typeof token !== "string" || !B64TOKEN.test(token)) throw new InvalidTokenError();
    if (request.redirect !== "follow") {
      // "manual" (set by the tenant client, or by the caller) or "error": no redirect can carry the header
      request.headers.set("authorization", `Bearer ${token}`);
      return undefined;
    }
    // A plain openapi-fetch client: switch to manual and follow same-origin redirects ourselves.
    await captureBody(params);
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${token}`);
    const manual = new Request(request, { headers, redirect: "manual" });
    followIntent.add(manual);
    return manual;
  }
}
