/**
 * Internal: the tenant's base URL and which URLs belong to its API. Not exported from the package.
 */
import { TenantClientError } from "./errors.js";

/**
 * Checks the tenant's base URL and returns the prefix of its API, `<origin><path>/api/v1`, in the
 * form WHATWG URL normalization gives `Request.url`. Bearer tokens travel only over TLS, so the URL
 * must be `https:`; `http:` only on a loopback host (`localhost`, 127.0.0.0/8, `[::1]`).
 *
 * @throws {@link TenantClientError} `INVALID_BASE_URL` for anything else, or credentials, a query or a fragment
 * @see RFC 6750 §5.3 (TLS), RFC 6761 §6.3 and RFC 1122 §3.2.1.3 (loopback)
 */
export function apiPrefix(baseUrl: string): string {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    // refused below
  }
  if (
    !url ||
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    !(url.protocol === "https:" || (url.protocol === "http:" && /^(localhost|\[::1\]|127(\.\d{1,3}){3})$/.test(url.hostname)))
  ) {
    throw new TenantClientError("INVALID_BASE_URL", "Invalid baseUrl");
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}/api/v1`;
}

/**
 * Whether a normalized absolute URL is under the API prefix: `/api/v1` itself or below it, not
 * `/api/v10`. Comparing normalized URLs means `..` segments, case and default ports cannot smuggle
 * a request out of the API or onto another host.
 *
 * @see RFC 6750 §5.2 (tokens go only to the resource server they are meant for)
 */
export function inScope(url: string, prefix: string | undefined): boolean {
  return prefix !== undefined && url.startsWith(prefix) && "/?#".includes(url[prefix.length] ?? "/");
}
