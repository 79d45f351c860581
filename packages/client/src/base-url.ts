/**
 * Internal: the tenant's base URL and which URLs belong to its API. Not exported from the package.
 * The rule itself is shared with the token manager (`packages/internal/src/base-url.ts`).
 */
import { TenantClientError } from "./errors.js";
import { tenantOrigin } from "@tenant-integration/internal";

/**
 * Checks the tenant's base URL and returns the prefix of its API, `<origin>/api/v1`, in the
 * form WHATWG URL normalization gives `Request.url`. Bearer tokens travel only over TLS, so the URL
 * must be `https:`; `http:` only on a loopback host (`localhost`, 127.0.0.0/8, `[::1]`). The token
 * manager refuses the same URLs with the same code and reason.
 *
 * @throws {@link TenantClientError} `INVALID_OPTIONS` for anything else, or credentials, a query,
 *   a fragment or a path; the message (`Invalid baseUrl: …`) says which rule failed, and never
 *   repeats the URL (it may hold credentials)
 * @see RFC 6750 §5.3 (TLS), RFC 6761 §6.3 and RFC 1122 §3.2.1.3 (loopback)
 */
export function apiPrefix(baseUrl: string): string {
  const checked = tenantOrigin(baseUrl);
  if ("refused" in checked) throw new TenantClientError("INVALID_OPTIONS", `Invalid baseUrl: ${checked.refused}`);
  return `${checked.origin}/api/v1`;
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
