/**
 * Internal: the tenant's base URL and which URLs belong to its API. Not exported from the package.
 */
import { TenantClientError } from "./errors.js";

/** Loopback host names, as the URL parser writes them: `localhost`, 127.0.0.0/8 and `[::1]`. */
const LOOPBACK = /^(localhost|\[::1\]|127(\.\d{1,3}){3})$/;

/**
 * Why `baseUrl` is refused, or `undefined` when it is acceptable. The rules, and the reasons word for
 * word, are the token manager's (`tenantBase`): https, or http to a loopback host; no credentials; no
 * query or fragment, not even an empty `?` or `#`; no path, since every tenant has its own host (the
 * service description, §1) and the kit adds `/api/v1` itself (a `baseUrl` ending in `/api/v1` would
 * otherwise fail late with a bare 404).
 */
function refusal(url: URL | undefined): string | undefined {
  if (!url) return "not an absolute URL";
  if (url.protocol === "http:" && !LOOPBACK.test(url.hostname)) return "http is allowed only to loopback (localhost, 127.0.0.0/8, [::1])";
  if (url.protocol !== "https:" && url.protocol !== "http:") return `${url.protocol} is not https`;
  if (url.username || url.password) return "no credentials allowed";
  // An empty "?" or "#" leaves search and hash empty, but still makes href longer than origin + path.
  if (url.href !== url.origin + url.pathname) return "no query or fragment allowed";
  if (url.pathname !== "/") return "no path allowed: give the tenant's origin, e.g. https://acme.tenant.example";
  return undefined;
}

/**
 * Checks the tenant's base URL and returns the prefix of its API, `<origin>/api/v1`, in the
 * form WHATWG URL normalization gives `Request.url`. Bearer tokens travel only over TLS, so the URL
 * must be `https:`; `http:` only on a loopback host (`localhost`, 127.0.0.0/8, `[::1]`).
 *
 * @throws {@link TenantClientError} `INVALID_BASE_URL` for anything else, or credentials, a query,
 *   a fragment or a path; the message says which rule failed, and never repeats the URL (it may hold
 *   credentials)
 * @see RFC 6750 §5.3 (TLS), RFC 6761 §6.3 and RFC 1122 §3.2.1.3 (loopback)
 */
export function apiPrefix(baseUrl: string): string {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    // refused below as "not an absolute URL"
  }
  const reason = refusal(url);
  if (url === undefined || reason !== undefined) throw new TenantClientError("INVALID_BASE_URL", `Invalid baseUrl: ${reason}`);
  return `${url.origin}/api/v1`;
}

/**
 * Whether a normalized absolute URL is under the API prefix: `/api/v1` itself or below it, not
 * `/api/v10`. Comparing normalized URLs means `..` segments, case and default ports cannot smuggle
 * a request out of the API or onto another host.
 *
 * @see RFC 6750 §5.2 (tokens go only to the resource server they are meant for)
 */
export function inScope(url: string, prefix: string | undefined): boolean {
  if (prefix === undefined || !url.startsWith(prefix)) return false;
  // what follows the prefix must end its last segment: nothing, "/", a query or a fragment
  const next = url.charAt(prefix.length);
  return next === "" || next === "/" || next === "?" || next === "#";
}
