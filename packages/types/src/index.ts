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

/**
 * The body of `POST /oauth/token`: one of the two grants, discriminated by `grant_type` (RFC 6749 §4.1.3, §6).
 * Assumption (not in the service description): the refresh grant's field names other than `grant_type`, and what
 * the endpoint does with an unknown field, follow RFC 6749 §6 and §3.2; see the generated type's TSDoc.
 */
export type TokenRequest = Schemas["TokenRequest"];
/**
 * The authorization code grant with its PKCE verifier (RFC 6749 §4.1.3, RFC 7636 §4.5). Assumption (not in the
 * service description): all five fields are required and the code is single use, as RFC 6749 §4.1.3 and §4.1.2 say;
 * the description shows neither.
 */
export type AuthorizationCodeGrantRequest = Schemas["AuthorizationCodeGrantRequest"];
/**
 * The refresh token grant (RFC 6749 §6). Assumption (not in the service description): its field names other than
 * `grant_type` follow RFC 6749 §6; see the generated type's TSDoc.
 */
export type RefreshTokenGrantRequest = Schemas["RefreshTokenGrantRequest"];
/**
 * Tokens issued by the authorization code grant: all four fields present (service description §4).
 * Assumption (not in the service description): `token_type` is `Bearer` and `expires_in` counts seconds (RFC 6749
 * §5.1); the description shows neither. See `components["schemas"]["TokenType"]` and `["ExpiresIn"]`.
 */
export type TokenResponse = Schemas["TokenResponse"];
/**
 * Tokens issued by a refresh. Assumption (not in the service description): `refresh_token` is left out when the
 * token is not rotated (RFC 6749 §6), `token_type` is `Bearer` and `expires_in` counts seconds (RFC 6749 §5.1).
 */
export type RefreshTokenResponse = Schemas["RefreshTokenResponse"];
/**
 * An OAuth error body of the token and revocation endpoints. Assumption (not in the service description): the
 * body shape and the error codes follow RFC 6749 §5.2 and RFC 7009 §2.2.1; the description shows neither.
 */
export type OAuthError = Schemas["OAuthError"];
/**
 * The body of `POST /oauth/revoke`. Assumption (not in the service description): its shape and field names follow
 * RFC 7009 §2.1; the description shows neither.
 */
export type RevocationRequest = Schemas["RevocationRequest"];
/** The authenticated user: an open object whose fields the service description does not show. */
export type User = Schemas["User"];
/**
 * The body of an API error: an open object. Assumption (not in the service description): the error itself is in
 * `WWW-Authenticate` (RFC 6750 §3); the description shows no error body.
 */
export type ApiError = Schemas["ApiError"];
