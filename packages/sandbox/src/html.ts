/**
 * The two HTML pages of the sandbox: the consent page and the error page. Every value from a
 * request or a registration is escaped.
 *
 * @module
 */
import { scopeDescriptions } from "@tenant-integration/types";
import { idOf, type UserId, type UserRecord } from "./users.js";

/**
 * Escapes text for HTML element content and quoted attribute values.
 *
 * @example escapeHtml('<a href="x">') // "&lt;a href=&quot;x&quot;&gt;"
 * @see https://html.spec.whatwg.org/multipage/syntax.html#escapingString
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ENTITIES[char] ?? "");
}

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/**
 * Headers of every HTML page: no caching, no framing (the consent page must not be clickjacked),
 * no referrer, and a strict content security policy (the pages have no script).
 *
 * @see RFC 6749 §10.13 (clickjacking)
 */
export const HTML_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
});

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}" +
  "code{background:#f3f3f3;padding:0 .25rem}button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.75rem}" +
  "ul{padding-left:1.25rem}.muted{color:#666;font-size:.875rem}";

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}<p class="muted">Tenant Integration sandbox: a local test tenant, not the real service.</p></body></html>`;
}

/** What the consent page shows. */
export interface ConsentPageInput {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  /** The opaque id of the pending request, posted back with the decision. */
  readonly requestId: string;
  /** The users the person may sign in as, and the one chosen at first. */
  readonly users: readonly UserRecord[];
  readonly user: UserId;
  /** Where the form posts. */
  readonly action: string;
}

const descriptions: Readonly<Record<string, string>> = scopeDescriptions;

/** How the consent page names a user: the `name` and `email` of the record when they are text, else its id. */
function userLabel(user: UserRecord): string {
  const { name, email } = user;
  const label = typeof name === "string" && name !== "" ? name : `User ${String(idOf(user))}`;
  return typeof email === "string" && email !== "" ? `${label} (${email})` : label;
}

/**
 * Renders the consent page: the client, the scopes asked for with their descriptions, the user to
 * sign in as (a list of the sandbox's users, the chosen one selected), and approve and deny buttons
 * in a form that posts only the opaque request id, the user's id and the decision.
 *
 * @see RFC 6749 §4.1.1 (the server asks the resource owner to grant or deny access)
 */
export function consentPage(input: ConsentPageInput): string {
  const items = input.scopes
    .map((scope) => `<li><code>${escapeHtml(scope)}</code>: ${escapeHtml(descriptions[scope] ?? "")}</li>`)
    .join("");
  const chosen = String(input.user);
  const options = input.users
    .map((user) => {
      const id = String(idOf(user));
      return `<option value="${escapeHtml(id)}"${id === chosen ? " selected" : ""}>${escapeHtml(userLabel(user))}</option>`;
    })
    .join("");
  return layout(
    "Approve access",
    `<h1>Approve access</h1>` +
      `<p>The application <strong>${escapeHtml(input.clientId)}</strong> asks for access to your account.</p>` +
      `<p>It asks for these scopes:</p><ul>${items}</ul>` +
      `<p class="muted">You will return to <code>${escapeHtml(input.redirectUri)}</code>.</p>` +
      `<form method="post" action="${escapeHtml(input.action)}">` +
      `<input type="hidden" name="request_id" value="${escapeHtml(input.requestId)}">` +
      `<p><label for="user">Sign in as</label> <select id="user" name="user">${options}</select></p>` +
      `<button type="submit" name="decision" value="approve">Approve</button>` +
      `<button type="submit" name="decision" value="deny">Deny</button>` +
      `</form>`,
  );
}

/**
 * Renders an error page shown to the user instead of a redirect (bad client or redirect URI, an
 * expired consent page).
 *
 * @see RFC 6749 §4.1.2.1 (inform the resource owner; do not redirect to an invalid URI)
 */
export function errorPage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`);
}

/**
 * Wraps an HTML page in a response with {@link HTML_HEADERS}. `formRedirectTo` is the redirect URI
 * a form on the page ends up at: browsers apply `form-action` to the redirects that follow a form
 * submission (Chromium does), so the consent page must allow that URI's origin as well as its own.
 *
 * @see https://www.w3.org/TR/CSP3/#directive-form-action
 */
export function htmlResponse(html: string, status: number, formRedirectTo?: string): Response {
  if (formRedirectTo === undefined) return new Response(html, { status, headers: HTML_HEADERS });
  const target = new URL(formRedirectTo);
  // An http(s) redirect URI is allowed by its origin; a private-use scheme (RFC 8252 §7.1) by its scheme.
  const source = target.protocol === "http:" || target.protocol === "https:" ? target.origin : target.protocol;
  const csp = (HTML_HEADERS["Content-Security-Policy"] ?? "").replace(
    "form-action 'self'",
    `form-action 'self' ${source}`,
  );
  return new Response(html, { status, headers: { ...HTML_HEADERS, "Content-Security-Policy": csp } });
}
