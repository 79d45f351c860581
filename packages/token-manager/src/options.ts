/**
 * Validation of the manager's addresses: the tenant origin and the redirect URI.
 *
 * @see RFC 8252 §8.3 (loopback), RFC 6749 §3.1.2 (redirect URI), OAuth 2.0 Security BCP (RFC 9700) §4.1
 */
import { type ErrorCode, fail } from "./errors.js";
import { tenantOrigin } from "@tenant-integration/internal";

export { isLoopback } from "@tenant-integration/internal";

/**
 * Checks that `baseUrl` is the tenant's origin: https, or http to a loopback address, with no
 * credentials, path, query or fragment, and returns its origin. Every request the manager makes is
 * this string followed by a fixed path, so no token can go to another origin. The rule is the
 * client's too (`packages/internal/src/base-url.ts`): both refuse the same URLs with the same code and
 * reason.
 *
 * @throws a `TokenManagerError` with code `INVALID_OPTIONS` for any other URL, its message saying why
 * (`INVALID_OPTIONS: baseUrl: no path allowed: give the tenant's origin, …`) without repeating the
 * URL (it may hold credentials).
 * @example
 * ```ts
 * tenantBase("https://acme.tenant.test/"); // "https://acme.tenant.test"
 * tenantBase("http://127.0.0.1:4010");      // "http://127.0.0.1:4010"
 * tenantBase("http://acme.tenant.test");    // throws TokenManagerError (INVALID_OPTIONS)
 * tenantBase("https://acme.tenant.test/api/v1"); // throws: give the tenant's origin
 * ```
 * @see RFC 6749 §3.1, §3.2 (TLS at the endpoints); RFC 8252 §8.3 (loopback); RFC 9700 §4.1
 */
export function tenantBase(baseUrl: string | URL): string {
  const checked = tenantOrigin(baseUrl);
  return "refused" in checked ? fail("INVALID_OPTIONS", "baseUrl: " + checked.refused) : checked.origin;
}

/**
 * Checks that the redirect URI is an absolute URL without a fragment, and returns the part a callback
 * must share with it: scheme, credentials, host, port and path (the URL parser's normal form, without
 * query). The URI itself is sent as given: it must match the registered URI character for character.
 *
 * @throws a `TokenManagerError` with code `INVALID_OPTIONS` otherwise.
 * @example
 * ```ts
 * redirectTarget("http://127.0.0.1:53682/callback"); // "http://127.0.0.1:53682/callback"
 * callbackTarget(new URL("http://127.0.0.1:53682/callback?code=c&state=s")); // the same
 * ```
 * @see RFC 6749 §3.1.2, RFC 8252 §7.3
 */
export function redirectTarget(redirectUri: string | URL): string {
  const url = parseUrl(redirectUri, "redirectUri");
  need(!url.hash, "redirectUri");
  return callbackTarget(url);
}

/**
 * The scheme, credentials, host, port and path of a URL: its normal form up to the query.
 *
 * @example
 * ```ts
 * callbackTarget(new URL("HTTPS://App.Example.org:443/cb?code=c#x")); // "https://app.example.org/cb"
 * ```
 * @see RFC 6749 §3.1.2; RFC 9700 §4.4 (mix-up)
 */
export const callbackTarget = (url: URL): string => url.href.split(/[?#]/)[0] as string;

/**
 * Throws a `TokenManagerError` with code `INVALID_OPTIONS` naming the option `name` unless `ok` is truthy.
 *
 * @example
 * ```ts
 * need(clientId.length > 0, "clientId");
 * ```
 * @see RFC 6749 §2.2 (client identifier), §3.3 (scope)
 */
export const need = (ok: unknown, name: string): unknown => ok || fail("INVALID_OPTIONS", name);

/**
 * Parses an absolute URL, or fails with `code` (`INVALID_OPTIONS` for an option, `INVALID_CALLBACK`
 * for a callback) naming `detail`.
 *
 * @example
 * ```ts
 * parseUrl(callbackUrl, "not a URL", "INVALID_CALLBACK");
 * ```
 * @see RFC 3986 §4.3 (absolute URI)
 */
export function parseUrl(value: string | URL, detail: string, code: ErrorCode = "INVALID_OPTIONS"): URL {
  try {
    return new URL(value);
  } catch {
    return fail(code, detail);
  }
}
