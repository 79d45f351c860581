/**
 * `GET /api/v1/auth/user`: the user the token belongs to, behind a bearer token with `profile:read`.
 *
 * @module
 */
import type { Context } from "hono";
import { insufficientScope, invalidToken, missingToken } from "../errors.js";
import type { SandboxState } from "../tenant-state.js";

/** The scope the route requires. */
export const USER_SCOPE = "profile:read";

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Reads the bearer token of an `Authorization` header.
 *
 * @example bearerToken("Bearer at_abc") // "at_abc"
 * @see RFC 6750 §2.1 (b64token syntax; the scheme is case-insensitive)
 */
export function bearerToken(header: string | null | undefined): string | undefined {
  if (header === null || header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/**
 * Handles `GET /api/v1/auth/user`: 401 with a bare bearer challenge when no token is sent, and
 * with `error="invalid_token"` for a malformed, unknown, expired or revoked one; 403 with `error="insufficient_scope", scope="profile:read"`
 * when the token lacks `profile:read`; otherwise 200 and the record of the user who approved the
 * token's grant: each token its own user.
 *
 * @see RFC 6750 §3.1
 */
export function userRoute(state: SandboxState) {
  return (c: Context): Response => {
    const header = c.req.header("authorization");
    if (header === undefined) return missingToken();
    const token = bearerToken(header);
    if (token === undefined) return invalidToken("The Authorization header is not a bearer token.");
    const found = state.tokens.inspect(token);
    switch (found.state) {
      case "unknown":
        return invalidToken("The access token is not valid.");
      case "expired":
        return invalidToken("The access token expired.");
      case "revoked":
        return invalidToken("The access token was revoked.");
      case "active": {
        if (!found.scopes.includes(USER_SCOPE)) return insufficientScope(USER_SCOPE);
        // Always found: the users never change while the sandbox runs, and a restore drops the grants of
        // users it no longer has. Never another user's record in its place.
        const user = state.users.get(found.user);
        if (user === undefined) return invalidToken("The user of this access token no longer exists.");
        return Response.json(user, { status: 200, headers: { "Cache-Control": "no-store" } });
      }
    }
  };
}
