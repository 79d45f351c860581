/**
 * Which URLs belong to the tenant's API: the same origin as the base URL and a path under
 * `<base path>/api/v1`. Only those get a bearer token. URLs are compared after WHATWG URL
 * normalization (`Request.url`), so `..` segments, case and default ports cannot smuggle a request
 * out of the API or onto another host.
 *
 * @example
 * ```ts
 * const scope = createApiScope("https://acme.tenant.example");
 * scope.contains("https://acme.tenant.example/api/v1/auth/user"); // true
 * scope.contains("https://acme.tenant.example/oauth/token");      // false
 * scope.contains("https://evil.example/api/v1/auth/user");        // false
 * ```
 * @see RFC 6750 §5.2 (tokens must go only to the resource server they are meant for)
 */
export interface ApiScope {
  /** The tenant's origin, e.g. `https://acme.tenant.example`. */
  readonly origin: string;
  /** The normalized API prefix, e.g. `https://acme.tenant.example/api/v1`. */
  readonly prefix: string;
  /**
   * Whether a normalized absolute URL (as in `Request.url`) is under the API prefix.
   * @param url - a normalized absolute URL
   */
  contains(url: string): boolean;
}

/**
 * Builds the {@link ApiScope} of a validated base URL.
 *
 * @param baseUrl - a base URL already checked by `validateBaseUrl`
 * @example
 * ```ts
 * createApiScope("http://127.0.0.1:4010").prefix; // "http://127.0.0.1:4010/api/v1"
 * ```
 * @see RFC 6750 §5.2
 */
export function createApiScope(baseUrl: string): ApiScope {
  const base = new URL(baseUrl);
  const prefix = new URL(`${base.pathname.replace(/\/+$/, "")}/api/v1`, base.origin).href;
  const length = prefix.length;
  return {
    origin: base.origin,
    prefix,
    contains(url: string): boolean {
      if (!url.startsWith(prefix)) return false;
      const next = url.charCodeAt(length);
      // end of string, "/", "?" or "#": "/api/v1x" is not under "/api/v1"
      return Number.isNaN(next) || next === 47 || next === 63 || next === 35;
    },
  };
}
