/**
 * Redirects back to the client's registered redirect URI.
 *
 * @module
 */
import { safeDescription } from "./errors.js";

/**
 * Builds a `302 Found` to `redirectUri` with `params` added to its query. The registered URI is
 * kept exactly as written (its own query included); the parameters are appended after it.
 *
 * @example redirectTo("http://localhost:5173/callback", { code: "ac_…", state: "xyz" })
 * @see RFC 6749 §3.1.2 (the redirect URI's query component must be retained)
 * @see RFC 6749 §4.1.2 and §4.1.2.1
 */
export function redirectTo(redirectUri: string, params: Readonly<Record<string, string | undefined>>): Response {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) query.append(name, name === "error_description" ? safeDescription(value) : value);
  }
  const separator = redirectUri.includes("?")
    ? redirectUri.endsWith("?") || redirectUri.endsWith("&")
      ? ""
      : "&"
    : "?";
  return new Response(null, {
    status: 302,
    headers: { Location: `${redirectUri}${separator}${query.toString()}`, "Cache-Control": "no-store" },
  });
}
