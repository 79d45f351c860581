/**
 * Types of the Tenant Integration Service contract, generated from `@tenant-integration/openapi`.
 *
 * This module has no run-time code but the scope list. The `paths`, `components` and `operations`
 * types drive `openapi-fetch`; the named aliases below are the ones integrations use most.
 *
 * @packageDocumentation
 */
import type { components } from "./generated/openapi.js";

export type { paths, components, operations } from "./generated/openapi.js";
export { scopes, scopeDescriptions, type Scope } from "./generated/scopes.js";

type Schemas = components["schemas"];

/** The body of `POST /oauth/token`: one of the two grants, discriminated by `grant_type` (RFC 6749 §4.1.3, §6). */
export type TokenRequest = Schemas["TokenRequest"];
/** The authorization code grant with its PKCE verifier (RFC 6749 §4.1.3, RFC 7636 §4.5). */
export type AuthorizationCodeGrantRequest = Schemas["AuthorizationCodeGrantRequest"];
/** The refresh token grant (RFC 6749 §6). */
export type RefreshTokenGrantRequest = Schemas["RefreshTokenGrantRequest"];
/** Tokens issued by the authorization code grant: all four fields present (RFC 6749 §5.1). */
export type TokenResponse = Schemas["TokenResponse"];
/** Tokens issued by a refresh; `refresh_token` only when rotated (RFC 6749 §6). */
export type RefreshTokenResponse = Schemas["RefreshTokenResponse"];
/** An OAuth error body of the token and revocation endpoints (RFC 6749 §5.2, RFC 7009 §2.2.1). */
export type OAuthError = Schemas["OAuthError"];
/** The body of `POST /oauth/revoke` (RFC 7009 §2.1). */
export type RevocationRequest = Schemas["RevocationRequest"];
/** The authenticated user: an open object whose fields the service description does not show. */
export type User = Schemas["User"];
/** The body of an API error: an open object; the error itself is in `WWW-Authenticate` (RFC 6750 §3). */
export type ApiError = Schemas["ApiError"];
