/**
 * Error answers: RFC 6749 §5.2 JSON bodies for the OAuth endpoints, RFC 6750 §3 bearer challenges
 * for the API, and JSON 404/405 for everything else.
 *
 * @module
 */

/** OAuth error codes the sandbox sends. @see RFC 6749 §5.2, RFC 7009 §2.2.1 */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "unsupported_token_type";

/** Headers of every response that carries, or may carry, tokens. @see RFC 6749 §5.1 */
export const NO_STORE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Cache-Control": "no-store",
  Pragma: "no-cache",
});

/**
 * A request the sandbox cannot read (bad content type, bad JSON, too large). Thrown by body
 * parsing and turned into `400 invalid_request` by the error handler.
 *
 * @see RFC 6749 §5.2 (invalid_request)
 */
export class BadRequestError extends Error {
  override readonly name = "BadRequestError";
  readonly code = "invalid_request";
}

/**
 * Builds an RFC 6749 §5.2 error response: JSON `{ error, error_description }`, status 400 unless
 * given, and `Cache-Control: no-store`.
 *
 * @example return oauthError("invalid_grant", "The authorization code was already used.");
 * @see RFC 6749 §5.2
 */
export function oauthError(error: OAuthErrorCode, description: string, status = 400): Response {
  return Response.json(
    { error, error_description: safeDescription(description) },
    { status, headers: NO_STORE_HEADERS },
  );
}

/**
 * Keeps an error description within the characters RFC 6749 allows (printable ASCII without `"`
 * and `\`), replacing any other with `?`, so that echoed input cannot break the grammar.
 *
 * @example safeDescription('bad "x"') // "bad ?x?"
 * @see RFC 6749 §5.2 (error_description: %x20-21 / %x23-5B / %x5D-7E)
 */
export function safeDescription(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, "?");
}

/** The realm the sandbox names in its bearer challenges. */
export const REALM = "tenant-sandbox";

/**
 * Answers 401 with `WWW-Authenticate: Bearer realm="…", error="invalid_token"` and a JSON body.
 *
 * @example return invalidToken("The access token expired.");
 * @see RFC 6750 §3.1 (invalid_token)
 */
export function invalidToken(description: string): Response {
  return Response.json(
    { error: "invalid_token", error_description: description },
    {
      status: 401,
      headers: {
        "WWW-Authenticate": `Bearer realm="${REALM}", error="invalid_token", error_description="${description}"`,
        "Cache-Control": "no-store",
      },
    },
  );
}

/**
 * Answers 401 to a request that carries no credentials at all: the challenge names the scheme
 * and realm but no error code.
 *
 * @example return missingToken();
 * @see RFC 6750 §3.1 ("If the request lacks any authentication information … the resource server
 * SHOULD NOT include an error code")
 */
export function missingToken(): Response {
  return Response.json(
    { error_description: "An access token is required." },
    { status: 401, headers: { "WWW-Authenticate": `Bearer realm="${REALM}"`, "Cache-Control": "no-store" } },
  );
}

/**
 * Answers 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`.
 *
 * @example return insufficientScope("profile:read");
 * @see RFC 6750 §3.1 (insufficient_scope)
 */
export function insufficientScope(scope: string): Response {
  return Response.json(
    {
      error: "insufficient_scope",
      error_description: `This route requires the scope ${scope}.`,
      scope,
    },
    {
      status: 403,
      headers: {
        "WWW-Authenticate": `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"`,
        "Cache-Control": "no-store",
      },
    },
  );
}

/** A JSON 404 for a route the sandbox does not have. */
export function notFound(method: string, path: string): Response {
  return Response.json(
    { error: "not_found", error_description: `No route ${method} ${path.slice(0, 200)} in the sandbox.` },
    { status: 404 },
  );
}

/**
 * A JSON 405 with the `Allow` header.
 *
 * @see RFC 9110 §15.5.6
 */
export function methodNotAllowed(allow: readonly string[]): Response {
  return Response.json(
    { error: "method_not_allowed", error_description: `Use ${allow.join(" or ")}.` },
    { status: 405, headers: { Allow: allow.join(", ") } },
  );
}
