import type { Middleware } from "openapi-fetch";
import type { AccessTokenSource } from "../access-token-source.js";
import { apiPrefix } from "../base-url.js";
import { coreMiddleware } from "./core.js";

/** Options of {@link bearerMiddleware} and {@link unauthorizedRetryMiddleware}. */
export interface BearerMiddlewareOptions {
  /** The tenant's base URL; only requests under `<baseUrl>/api/v1` are concerned. Validated like the client's. */
  readonly baseUrl: string;
  /** Where tokens come from. */
  readonly auth: AccessTokenSource;
}

/**
 * Middleware that adds `Authorization: Bearer <token>` to requests whose normalized URL is on the
 * tenant's origin under `/api/v1`, and only to those: never to `/oauth/*`, another origin (even as
 * an absolute URL) or a path that leaves `/api/v1` through `..`. The strategy is not even asked for
 * a token for other requests.
 *
 * A request that carries the token is sent with `redirect: "manual"`, and no redirect is followed,
 * not even to the same origin: the 3xx comes back to the caller as it is (safer than deciding which
 * hops may keep the token). In browsers a manual redirect is an opaque response (status 0) and is
 * returned as is.
 *
 * Register it after middleware that rewrites requests, so that it sees the final URL.
 *
 * @param options - the tenant base URL and the token source
 * @returns an openapi-fetch middleware
 * @throws {@link TenantClientError} `INVALID_OPTIONS` (synchronously) for an unacceptable `baseUrl`
 * @throws {@link TenantClientError} with code `INVALID_TOKEN` (from the request) when the strategy yields a value outside `b64token`
 * @example
 * ```ts
 * import createClient from "openapi-fetch";
 * const client = createClient<paths>({ baseUrl: "https://acme.tenant.example" });
 * client.use(bearerMiddleware({ baseUrl: "https://acme.tenant.example", auth: staticToken(token) }));
 * ```
 * @see RFC 6750 §2.1 (the Authorization request header field)
 * @see RFC 6750 §5.2 and §5.3 (token redirect, TLS)
 * @see RFC 9110 §15.4 (redirection)
 */
export function bearerMiddleware(options: BearerMiddlewareOptions): Middleware {
  return coreMiddleware({ prefix: apiPrefix(options.baseUrl), auth: options.auth, parts: { bearer: true } });
}
