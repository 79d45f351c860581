import { InvalidBaseUrlError } from "./errors.js";

/**
 * Parses and checks the tenant's base URL. Bearer tokens must travel only over TLS, so the URL must
 * be `https:`; plain `http:` is accepted only on a loopback host (`localhost`, 127.0.0.0/8, `[::1]`)
 * for local mocks and sandboxes. Credentials, a query or a fragment are refused. A trailing slash
 * is removed.
 *
 * @param baseUrl - the tenant's address, e.g. `https://acme.tenant.example`
 * @returns the normalized base URL, without a trailing slash
 * @throws {@link InvalidBaseUrlError} when the URL is not acceptable
 * @example
 * ```ts
 * validateBaseUrl("https://acme.tenant.example/"); // "https://acme.tenant.example"
 * validateBaseUrl("http://127.0.0.1:4010");       // allowed: loopback
 * validateBaseUrl("http://acme.tenant.example");  // throws InvalidBaseUrlError
 * ```
 * @see RFC 6750 §5.3 (bearer tokens require TLS)
 */
export function validateBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new InvalidBaseUrlError("not an absolute URL");
  }
  if (url.username !== "" || url.password !== "") throw new InvalidBaseUrlError("credentials in the URL are not allowed");
  if (url.search !== "" || url.hash !== "") throw new InvalidBaseUrlError("a query or fragment is not allowed");
  if (url.protocol === "http:") {
    if (!isLoopback(url.hostname)) throw new InvalidBaseUrlError("http is allowed only on a loopback host; use https");
  } else if (url.protocol !== "https:") {
    throw new InvalidBaseUrlError(`the scheme ${url.protocol} is not allowed; use https`);
  }
  return url.href.replace(/\/+$/, "");
}

/**
 * Whether a URL host name (as `URL.hostname` normalizes it) is a loopback address.
 *
 * @param hostname - e.g. `127.0.0.1`, `[::1]`, `localhost`
 * @example
 * ```ts
 * isLoopback("127.8.0.1"); // true
 * isLoopback("10.0.0.1");  // false
 * ```
 * @see RFC 6761 §6.3 (`localhost`), RFC 1122 §3.2.1.3 (127.0.0.0/8)
 */
export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
