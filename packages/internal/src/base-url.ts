/**
 * The tenant's address, as both kits take it: the client (`createTenantClient`, the middleware
 * factories) and the token manager (`createTokenManager`) refuse the same URLs for the same reasons,
 * with the same code, `INVALID_OPTIONS` (as the Python kit's `_base_url.py` does).
 *
 * Every tenant has its own host (the service description, §1) and serves authorization, tokens and
 * the API there, so the kits take the tenant's *origin* and add the paths (`/oauth/…`, `/api/v1`)
 * themselves: a token can then go nowhere else.
 *
 * @see RFC 6750 §5.3 (tokens only over TLS), RFC 8252 §8.3 (loopback), RFC 9700 §4.1
 */

/**
 * True for the loopback host names as the URL parser writes them: `localhost`, 127.0.0.0/8 and
 * `[::1]`.
 *
 * @example
 * ```ts
 * isLoopback("127.0.0.1"); // true
 * isLoopback("localhost.evil.example"); // false
 * ```
 * @see RFC 8252 §8.3, RFC 6761 §6.3, RFC 1122 §3.2.1.3
 */
export const isLoopback = (hostname: string): boolean => /^(localhost|\[::1\]|127(\.\d{1,3}){3})$/.test(hostname);

/**
 * Why `url` is not a tenant origin, or `undefined` when it is one: https, or http to a loopback
 * host; no credentials; no query or fragment, not even an empty `?` or `#`; no path (a `baseUrl`
 * ending in `/api/v1` would otherwise fail late with a bare 404). No reason repeats the URL: it may
 * hold credentials.
 */
function refusal(url: URL | undefined): string | undefined {
  if (!url) return "not an absolute URL";
  if (url.protocol === "http:" && !isLoopback(url.hostname))
    return "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])";
  if (url.protocol !== "https:" && url.protocol !== "http:") return `${url.protocol} is not https`;
  if (url.username || url.password) return "no credentials allowed";
  // An empty "?" or "#" leaves search and hash empty, but still makes href longer than origin + path.
  if (url.href !== url.origin + url.pathname) return "no query or fragment allowed";
  if (url.pathname !== "/") return "no path allowed: give the tenant's origin, e.g. https://acme.tenant.example";
  return undefined;
}

/**
 * Checks that `baseUrl` is a tenant's origin (see the module's rules) and returns it normalized
 * (lower-case host, no default port, no trailing slash), or the reason it is refused. Each kit
 * throws its own error class with code `INVALID_OPTIONS` and this reason.
 *
 * @example
 * ```ts
 * tenantOrigin("https://ACME.tenant.example:443/"); // { origin: "https://acme.tenant.example" }
 * tenantOrigin("https://acme.tenant.example/api/v1"); // { refused: "no path allowed: give the tenant's origin, …" }
 * ```
 * @see RFC 6750 §5.3, RFC 8252 §8.3, RFC 9700 §4.1
 */
export function tenantOrigin(baseUrl: string | URL): { readonly origin: string } | { readonly refused: string } {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    // refused below as "not an absolute URL"
  }
  const reason = refusal(url);
  return reason === undefined ? { origin: url!.origin } : { refused: reason };
}
