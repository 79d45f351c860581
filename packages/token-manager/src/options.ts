/**
 * Validation of the manager's addresses: the tenant origin and the redirect URI.
 *
 * @see RFC 8252 §8.3 (loopback), RFC 6749 §3.1.2 (redirect URI), OAuth 2.0 Security BCP (RFC 9700) §4.1
 */
import { ConfigurationError } from "./errors.js";

/**
 * Checks that `baseUrl` is https, or http to a loopback address, with no credentials, query or
 * fragment, and returns it without a trailing slash. Every request the manager makes is this string
 * followed by a fixed path, so no token can go to another origin.
 *
 * @throws {@link ConfigurationError} for any other URL.
 * @example
 * ```ts
 * tenantBase("https://acme.tenant.test/"); // "https://acme.tenant.test"
 * tenantBase("http://127.0.0.1:4010");      // "http://127.0.0.1:4010"
 * tenantBase("http://acme.tenant.test");    // throws ConfigurationError
 * ```
 * @see RFC 8252 §8.3, RFC 9700 §4.1
 */
export function tenantBase(baseUrl: string | URL): string {
  const url = parse(baseUrl, "baseUrl");
  const secure = url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url.hostname));
  if (!secure || url.username || url.password || url.search || url.hash) {
    throw new ConfigurationError("baseUrl must be https, or http to loopback, without credentials, query or fragment");
  }
  return url.origin + url.pathname.replace(/\/+$/, "");
}

/**
 * Checks that the redirect URI is an absolute URL without a fragment, and returns it unchanged: it
 * must match the registered URI character for character.
 *
 * @throws {@link ConfigurationError} otherwise.
 * @example
 * ```ts
 * redirectTarget("http://127.0.0.1:53682/callback");
 * ```
 * @see RFC 6749 §3.1.2, RFC 8252 §7.3
 */
export function redirectTarget(redirectUri: string | URL): string {
  if (parse(redirectUri, "redirectUri").hash) throw new ConfigurationError("redirectUri has a fragment");
  return String(redirectUri);
}

/**
 * True for `localhost`, `127.0.0.0/8` and `[::1]`.
 *
 * @example
 * ```ts
 * isLoopback("127.0.0.1"); // true
 * ```
 * @see RFC 8252 §8.3
 */
export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

function parse(value: string | URL, name: string): URL {
  try {
    return new URL(String(value));
  } catch {
    throw new ConfigurationError(`${name} is not a URL`);
  }
}
