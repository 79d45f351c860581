/**
 * Types of the Tenant Integration Service contract, from openapi-typescript.
 *
 * GENERATED FILE: do not edit by hand. Change the contract in spec/ and run
 * `pnpm --filter @tenant-integration/types generate`.
 */
export interface paths {
    "/oauth/authorize": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Start the authorization (the browser is sent here)
         * @description Starts OAuth 2.0 Authorization Code with PKCE (RFC 6749 §4.1.1, RFC 7636 §4.3). The client sends
         *     the user's browser here; it never calls this endpoint with fetch.
         *
         *     After approval the browser is redirected to `redirect_uri` carrying `code` and the unchanged
         *     `state`. The client must compare `state` exactly with the value stored for the browser session
         *     and reject the response on a mismatch, before any exchange.
         */
        get: operations["authorize"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/oauth/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Exchange a code, or refresh the access token
         * @description The token endpoint (RFC 6749 §3.2). Send `Accept: application/json` and
         *     `Content-Type: application/json`. No client secret is sent.
         *
         *     - `grant_type=authorization_code` exchanges the callback's `code` with the PKCE
         *       `code_verifier` (RFC 6749 §4.1.3, RFC 7636 §4.5).
         *     - `grant_type=refresh_token` obtains a new access token before the current one expires
         *       (RFC 6749 §6). The response may rotate the refresh token: store the new one in place of the
         *       old, before using the new access token.
         */
        post: operations["exchangeToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/oauth/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke the current access token and disconnect
         * @description Revokes the current access token, which disconnects the integration (service description §3,
         *     §4). After it, API calls with that token are answered 401 (assumed, RFC 6750 §3.1: see below).
         *     The client then discards its tokens.
         *
         *     **Assumption (not in the service description):** The request and response shape, method details and
         *     parameter names are not shown. They follow RFC 7009: a POST whose body is form-encoded (RFC 7009
         *     §2.1) or JSON (as this service's token endpoint takes), answered 200 whether or not the token was
         *     still valid (RFC 7009 §2.2), and 400 with an RFC 6749 §5.2 error body for a malformed request (RFC
         *     7009 §2.2.1). That API calls with the revoked token are then answered 401 is assumed as for any
         *     token that is no longer valid (RFC 6750 §3.1): the description says only that the integration is
         *     disconnected.
         */
        post: operations["revokeToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/auth/user": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the authenticated user
         * @description Returns the user the access token was issued for. Send `Authorization: Bearer <ACCESS_TOKEN>`
         *     and `Accept: application/json`. The record's fields are not shown in the service description,
         *     so it is an open object.
         *
         *     **Assumption (not in the service description):** The exact scope check of this route is not shown
         *     beyond the quickstart requesting profile:read; the contract takes profile:read as the scope it
         *     requires. Were another scope found to be accepted too, it would be a second security requirement
         *     object (any one of them suffices, service description §5.9), never a second scope in the same object
         *     (which would mean both).
         */
        get: operations["getAuthenticatedUser"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * Scope list
         * @description Space-separated scope names (service description §2: "space-separated list of scope names"),
         *     each one of the 37 names of the `tenantOAuth` security scheme, exactly as written there. An
         *     unknown name does not match, so a generated request cannot pass an invented scope as valid.
         *
         *     **Assumption (not in the service description):** The description gives the 37 names and says the
         *     list is space-separated; it does not say how the service treats an unknown name or repeated spaces.
         *     The pattern allows exactly the 37 names, joined by single spaces, a subset of the scope-token
         *     grammar of RFC 6749 §3.3.
         * @example profile:read
         * @example profile:read tickets:read tickets:write
         */
        ScopeList: string;
        /**
         * @description The original PKCE verifier: 43–128 URL-safe characters (service description §2, §8), created
         *     from a cryptographically random source and never reused.
         *
         *     **Assumption (not in the service description):** The description says "URL-safe" without listing the
         *     characters. The contract reads it as the unreserved characters of RFC 7636 §4.1 (A-Z a-z 0-9 - . _
         *     ~), the verifier's own grammar.
         * @example dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk
         */
        CodeVerifier: string;
        /**
         * Authorization code grant
         * @description Exchanges the code received on the callback for tokens (RFC 6749 §4.1.3, RFC 7636 §4.5). Sent as
         *     JSON. No client secret is sent (service description §4): a public client cannot keep one, and
         *     proves possession with the verifier.
         *
         *     **Assumption (not in the service description):** The service description lists the five fields
         *     without a required column. RFC 6749 §4.1.3 makes grant_type, code, redirect_uri (when it was in the
         *     authorization request, as here) and, for an unauthenticated client, client_id REQUIRED, and RFC 7636
         *     §4.5 makes code_verifier REQUIRED, so the contract requires all five.
         */
        AuthorizationCodeGrantRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            grant_type: "authorization_code";
            /** @description The OAuth client identifier. */
            client_id: string;
            /**
             * Format: uri
             * @description The redirect URI used in the authorization request, exactly.
             */
            redirect_uri: string;
            /**
             * @description The code received on the callback. Single use.
             *
             *     **Assumption (not in the service description):** That the code is single use is not shown. RFC 6749
             *     §4.1.2 says the client MUST NOT use it more than once and the server MUST deny a second use, so a
             *     second exchange is answered 400 invalid_grant (RFC 6749 §5.2).
             */
            code: string;
            code_verifier: components["schemas"]["CodeVerifier"];
        };
        /**
         * Refresh token grant
         * @description Obtains a new access token with a refresh token, before the access token expires. The response
         *     may rotate the refresh token; the client must then store the new one in place of the old.
         *
         *     **Assumption (not in the service description):** The service description names only
         *     grant_type=refresh_token and "a valid refresh token"; the other field names are not shown. They
         *     follow RFC 6749 §6: refresh_token (REQUIRED) and scope (OPTIONAL). client_id is optional: RFC 6749
         *     §3.2.1 makes it a MUST only in the authorization_code request of an unauthenticated client, and a
         *     MAY on other token requests; the refresh token identifies its client. The kit sends it. The body is
         *     JSON like the authorization code grant.
         */
        RefreshTokenGrantRequest: {
            /**
             * @description discriminator enum property added by openapi-typescript
             * @enum {string}
             */
            grant_type: "refresh_token";
            /** @description The current refresh token. Never log it or put it in a URL. */
            refresh_token: string;
            /** @description The OAuth client identifier (optional, RFC 6749 §3.2.1). */
            client_id?: string;
            scope?: components["schemas"]["ScopeList"];
        };
        /**
         * @description The body of `POST /oauth/token`, one of two grants told apart by `grant_type`.
         *
         *     **Assumption (not in the service description):** What the token endpoint does with a field it does
         *     not know is not shown. RFC 6749 §3.2 says the server MUST ignore unrecognized request parameters, so
         *     the grants do not forbid other fields.
         */
        TokenRequest: components["schemas"]["AuthorizationCodeGrantRequest"] | components["schemas"]["RefreshTokenGrantRequest"];
        /**
         * @description Bearer token for API calls. Lifetime 15 minutes from issue.
         *
         *     **Assumption (not in the service description):** The form of the access token is not shown. It is
         *     sent as "Authorization: Bearer <ACCESS_TOKEN>" (service description §5.6), whose credentials are a
         *     b64token (RFC 6750 §2.1), so the contract takes that syntax: letters, digits and - . _ ~ + /, then
         *     any number of =.
         * @example at_2YotnFZFEjr1zCsicMWpAA
         */
        AccessToken: string;
        /**
         * @description Obtains new access tokens. Lifetime 30 days from issue. May be rotated on refresh: store the new
         *     one in place of the old. Never log it, put it in a URL or give it to a third party.
         * @example rt_tGzv3JOkF0XG5Qx2TlKWIA
         */
        RefreshToken: string;
        /**
         * @description The type of the access token; use it in the `Authorization` header as `Bearer`.
         *
         *     **Assumption (not in the service description):** The value of token_type is not shown. The API takes
         *     "Authorization: Bearer", so the token is a bearer token (RFC 6750 §4, RFC 6749 §7.1) and the value
         *     is "Bearer", compared case-insensitively (RFC 6749 §5.1). The contract keeps the type a string whose
         *     pattern admits "Bearer" in any casing and nothing else, so that another casing is not rejected.
         * @example Bearer
         */
        TokenType: string;
        /**
         * Format: int32
         * @description Lifetime of the access token in seconds from issue; 900 (15 minutes) for this service.
         *
         *     **Assumption (not in the service description):** The unit and form of expires_in are not shown, only
         *     that it is the number of the access token lifetime. RFC 6749 §5.1 defines it as the lifetime in
         *     seconds, so the 15 minutes of the description are 900, and RFC 6749 Appendix A.14 writes it as
         *     digits, so it is an integer. That it is positive and fits in 32 bits is the contract's bound: a
         *     lifetime of 15 minutes is both.
         * @example 900
         */
        ExpiresIn: number;
        /**
         * Token response
         * @description The tokens issued by the authorization code grant (RFC 6749 §5.1). All four fields are present.
         */
        TokenResponse: {
            access_token: components["schemas"]["AccessToken"];
            refresh_token: components["schemas"]["RefreshToken"];
            token_type: components["schemas"]["TokenType"];
            expires_in: components["schemas"]["ExpiresIn"];
            /**
             * @description The granted scopes, space-separated. Present whenever the granted scope differs from the
             *     requested one; it may be left out when they are the same (RFC 6749 §5.1, §3.3).
             *
             *     **Assumption (not in the service description):** The description does not show a scope field in the
             *     token response. RFC 6749 §5.1 makes it OPTIONAL if the granted scope is identical to the one the
             *     client requested and REQUIRED otherwise, and RFC 6749 §3.3 requires the server to tell the client
             *     when it grants a different scope. The schema cannot compare it with the request, so it stays an
             *     optional property here; a client that finds it absent takes the requested scopes as granted.
             */
            scope?: string;
        };
        /**
         * Refresh response
         * @description The tokens issued by the refresh token grant (RFC 6749 §6). A new `refresh_token` is present when
         *     the server rotates it; the client must then store it in place of the old one.
         *
         *     **Assumption (not in the service description):** The description says the refresh response "may
         *     rotate" the refresh token without saying what a response that does not rotate contains. RFC 6749 §6
         *     (and §5.1, refresh_token OPTIONAL) lets the server leave the new refresh token out, so this shape
         *     does not require it; a client then keeps the refresh token it has. Whether the old one stays valid
         *     after a rotation, or without one, is not shown.
         */
        RefreshTokenResponse: {
            access_token: components["schemas"]["AccessToken"];
            refresh_token?: components["schemas"]["RefreshToken"];
            token_type: components["schemas"]["TokenType"];
            expires_in: components["schemas"]["ExpiresIn"];
            /**
             * @description The granted scopes, space-separated. Present whenever they differ from those requested
             *     (RFC 6749 §5.1, §3.3); a refresh without `scope` requests the scopes originally granted (RFC 6749 §6).
             *
             *     **Assumption (not in the service description):** The description does not show a scope field in the
             *     refresh response. RFC 6749 §6 answers a refresh as in §5.1, where scope is OPTIONAL if the granted
             *     scope equals the requested one and REQUIRED otherwise (§3.3).
             */
            scope?: string;
        };
        /**
         * OAuth error
         * @description An error of the token or revocation endpoint (RFC 6749 §5.2, RFC 7009 §2.2.1). `error` is one of
         *     `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
         *     `unsupported_grant_type`, `invalid_scope` or, for revocation, `unsupported_token_type`.
         *
         *     **Assumption (not in the service description):** The error body shape and the OAuth error codes are
         *     not shown. They follow RFC 6749 §5.2 (a JSON object with error, optional error_description and
         *     error_uri) and RFC 7009 §2.2.1. error stays a string so that codes from the OAuth extensions
         *     registry (RFC 6749 §8.5) are not rejected; its characters, and those of error_description, are the
         *     ones RFC 6749 §5.2 allows (%x20-21 / %x23-5B / %x5D-7E: printable ASCII without the double quote and
         *     the backslash).
         */
        OAuthError: {
            /** @description A single ASCII error code (RFC 6749 §5.2). */
            error: string;
            /** @description Human-readable text to help the developer; never shown as is to end users. */
            error_description?: string;
            /**
             * Format: uri
             * @description A page about the error.
             */
            error_uri?: string;
        };
        /**
         * Revocation request
         * @description Revokes the current access token, which disconnects the integration (service description §3,
         *     §4). Send `token`, the client's `client_id`, and optionally `token_type_hint`.
         *
         *     **Assumption (not in the service description):** The request shape, method details and parameter
         *     names of /oauth/revoke are not shown. They follow RFC 7009 §2.1: a POST with token (REQUIRED) and
         *     token_type_hint (OPTIONAL), in the form encoding of RFC 7009 or in JSON like this service's token
         *     endpoint. A public client identifies itself with its client_id: RFC 7009 §2.1 refers to client
         *     authentication as in RFC 6749 §2.3, and RFC 7009 §5 has the request of a public client contain a
         *     valid client_id. The kit always sends it. The schema still admits a request without it, since the
         *     token names its client; the sandbox answers one 200 (whether the service does is not shown). Any
         *     other field is a single string, since a form value is one string and a repeated parameter is
         *     malformed (RFC 6749 §3.2, RFC 7009 §2.2.1).
         */
        RevocationRequest: {
            /** @description The current access token. */
            token: string;
            /**
             * @description What `token` is (RFC 7009 §2.1): `access_token` for this service's revoke, or `refresh_token`.
             *     A hint the server does not know is ignored, and the answer stays 200 (RFC 7009 §2.1, §2.2).
             *
             *     **Assumption (not in the service description):** The hint is not shown. RFC 7009 §2.1 defines
             *     access_token and refresh_token and lets the server ignore the hint and search every token type; the
             *     values come from a registry that extensions add to (RFC 7009 §4.1.2), so the contract keeps the hint
             *     an open string and an unknown hint changes nothing (RFC 7009 §2.2: 200 whether or not a token was
             *     revoked).
             * @example access_token
             */
            token_type_hint?: string;
            /** @description The OAuth client identifier (RFC 7009 §5, RFC 6749 §2.3). */
            client_id?: string;
        } & {
            [key: string]: string;
        };
        /**
         * User
         * @description The authenticated user. Its fields are not shown in the service description, so the record is an
         *     open JSON object: read the fields you need defensively.
         */
        User: {
            [key: string]: unknown;
        };
        /**
         * API error
         * @description The body of an API error. Its shape is not shown in the service description; the machine-readable
         *     error is in the `WWW-Authenticate` header (RFC 6750 §3). Treat the body as an open object.
         *
         *     **Assumption (not in the service description):** The error body shape is not shown. RFC 6750 §3
         *     carries the error code in the WWW-Authenticate header and defines no body, so the body, when there
         *     is one, is JSON of unknown fields.
         */
        ApiError: {
            [key: string]: unknown;
        };
    };
    responses: {
        /**
         * @description The request was refused (RFC 6749 §5.2): a malformed body, an unknown client, a bad, expired or
         *     reused code, a wrong verifier, a redirect_uri that differs from the authorization request, or an
         *     expired, revoked or rotated-away refresh token.
         *
         *     **Assumption (not in the service description):** Status codes for bad codes, bad verifiers and
         *     expired tokens are not shown. RFC 6749 §5.2 answers every such error with HTTP 400 and an error code
         *     in a JSON body; invalid_grant covers bad, expired or reused codes and refresh tokens and a verifier
         *     that does not match (RFC 7636 §4.6).
         */
        OAuthErrorResponse: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OAuthError"];
            };
        };
        /**
         * @description The access token is missing, malformed, expired (15 minutes after issue) or revoked; the request
         *     is not accepted as authenticated (RFC 6750 §3.1: `invalid_token`, or no error code when the
         *     request sent no token). Refresh and retry once.
         *
         *     **Assumption (not in the service description):** The status code for an expired or revoked token is
         *     not shown. RFC 6750 §3.1 answers invalid_token with HTTP 401 and a WWW-Authenticate challenge.
         */
        Unauthorized: {
            headers: {
                "WWW-Authenticate": components["headers"]["InvalidTokenChallenge"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
        /**
         * @description The token lacks the scope the route requires (service description §5.9). The
         *     `WWW-Authenticate` challenge says `insufficient_scope` and names the required scope (assumed:
         *     the description shows no challenge; RFC 6750 §3.1 defines the error code and lets the server
         *     include the `scope` attribute of RFC 6750 §3).
         */
        Forbidden: {
            headers: {
                "WWW-Authenticate": components["headers"]["InsufficientScopeChallenge"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ApiError"];
            };
        };
    };
    parameters: {
        /** @description Must be `code` (RFC 6749 §4.1.1). */
        ResponseType: "code";
        /**
         * @description Identifier of the OAuth client (RFC 6749 §2.2).
         *
         *     **Assumption (not in the service description):** The service description lists client_id without
         *     marking it required. RFC 6749 §4.1.1 makes client_id REQUIRED in the authorization request, and a
         *     public client has no other way to identify itself, so the contract requires it.
         */
        ClientId: string;
        /**
         * @description Where the browser returns after approval. Must exactly match (character for character) a URI
         *     registered for the OAuth client, with no exception (service description §2 and §7): a loopback
         *     URI of a command-line tool is registered with its fixed port and sent with that same port. It is
         *     percent-encoded in the query. A mismatch is not redirected (RFC 6749 §4.1.2.1).
         *
         *     **Assumption (not in the service description):** The service description lists redirect_uri without
         *     marking it required. RFC 6749 §4.1.1 makes it OPTIONAL only where the server can fall back to a
         *     single registered URI (§3.1.2.3), and the token exchange must repeat it (§4.1.3); how URIs are
         *     registered is not shown, so the contract requires it on every request.
         */
        RedirectUri: string;
        /**
         * @description Space-separated list of scope names, percent-encoded in the query (service description §2). The
         *     contract admits only the 37 names of the `tenantOAuth` security scheme.
         *
         *     **Assumption (not in the service description):** Whether scope is required, and what applies when it
         *     is omitted, is not shown. RFC 6749 §3.3 makes scope OPTIONAL in the request (the server then applies
         *     a default or fails), so the contract leaves it optional. The kit always sends it. The description
         *     gives the 37 scope names and says the list is space-separated; that the parameter takes only those
         *     names, joined by single spaces, is the contract's reading (see ScopeList): how the service treats an
         *     unknown name is not shown.
         */
        Scope: components["schemas"]["ScopeList"];
        /**
         * @description An unpredictable random value, returned unchanged on the callback. The client stores it for the
         *     browser session, never reuses it, and compares the returned value exactly with the stored one,
         *     rejecting the response on any mismatch before any exchange (RFC 6749 §10.12).
         */
        State: string;
        /**
         * @description `BASE64URL(SHA256(code_verifier))` without padding (RFC 7636 §4.2): always 43 characters of
         *     `A-Z a-z 0-9 - _`.
         *
         *     **Assumption (not in the service description):** The service description lists code_challenge
         *     without marking it required, but requires code_challenge_method and PKCE for every public
         *     integration. RFC 7636 §4.3 makes code_challenge REQUIRED whenever PKCE is used, so the contract
         *     requires it.
         */
        CodeChallenge: string;
        /** @description Must be `S256` (RFC 7636 §4.3). `plain` is not accepted. */
        CodeChallengeMethod: "S256";
    };
    requestBodies: never;
    headers: {
        /**
         * @description `no-store`: tokens must never be cached (RFC 6749 §5.1).
         *
         *     **Assumption (not in the service description):** Not shown in the description; RFC 6749 §5.1
         *     requires it on responses that carry tokens.
         */
        "Cache-Control": "no-store";
        /**
         * @description `no-cache`, for HTTP/1.0 caches, next to `Cache-Control: no-store` (RFC 6749 §5.1).
         *
         *     **Assumption (not in the service description):** Not shown in the description; the same sentence of
         *     RFC 6749 §5.1 that asks for Cache-Control: no-store on responses carrying tokens asks for Pragma:
         *     no-cache as well.
         */
        Pragma: "no-cache";
        /**
         * @description The bearer challenge of RFC 6750 §3: `Bearer error="invalid_token"` for a malformed, expired or
         *     revoked token; a challenge with a `realm` and no error code when the request sent no token at all
         *     (RFC 6750 §3 has the scheme followed by at least one attribute): the sandbox sends
         *     `Bearer realm="tenant-sandbox"`.
         *
         *     **Assumption (not in the service description):** Not shown in the description; RFC 6750 §3 requires
         *     a WWW-Authenticate challenge on 401, with error="invalid_token" for a bad token and no error code
         *     when the request carried no credentials (RFC 6750 §3.1). The service's realm value is not shown;
         *     "tenant-sandbox" is the sandbox's.
         */
        InvalidTokenChallenge: string;
        /**
         * @description The bearer challenge for a token that lacks the route's scope:
         *     `Bearer error="insufficient_scope", scope="profile:read"`, naming the scope the route requires.
         *
         *     **Assumption (not in the service description):** Not shown in the description, which says only 403
         *     Forbidden. RFC 6750 §3 has the server include a WWW-Authenticate challenge when the token does not
         *     enable access, with error="insufficient_scope" (§3.1); the scope attribute is one it MAY include
         *     (§3.1). The contract documents the header, with the scope attribute, as what the kit's sandbox
         *     sends; whether the service sends it is not shown.
         */
        InsufficientScopeChallenge: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    authorize: {
        parameters: {
            query: {
                /** @description Must be `code` (RFC 6749 §4.1.1). */
                response_type: components["parameters"]["ResponseType"];
                /**
                 * @description Identifier of the OAuth client (RFC 6749 §2.2).
                 *
                 *     **Assumption (not in the service description):** The service description lists client_id without
                 *     marking it required. RFC 6749 §4.1.1 makes client_id REQUIRED in the authorization request, and a
                 *     public client has no other way to identify itself, so the contract requires it.
                 */
                client_id: components["parameters"]["ClientId"];
                /**
                 * @description Where the browser returns after approval. Must exactly match (character for character) a URI
                 *     registered for the OAuth client, with no exception (service description §2 and §7): a loopback
                 *     URI of a command-line tool is registered with its fixed port and sent with that same port. It is
                 *     percent-encoded in the query. A mismatch is not redirected (RFC 6749 §4.1.2.1).
                 *
                 *     **Assumption (not in the service description):** The service description lists redirect_uri without
                 *     marking it required. RFC 6749 §4.1.1 makes it OPTIONAL only where the server can fall back to a
                 *     single registered URI (§3.1.2.3), and the token exchange must repeat it (§4.1.3); how URIs are
                 *     registered is not shown, so the contract requires it on every request.
                 */
                redirect_uri: components["parameters"]["RedirectUri"];
                /**
                 * @description Space-separated list of scope names, percent-encoded in the query (service description §2). The
                 *     contract admits only the 37 names of the `tenantOAuth` security scheme.
                 *
                 *     **Assumption (not in the service description):** Whether scope is required, and what applies when it
                 *     is omitted, is not shown. RFC 6749 §3.3 makes scope OPTIONAL in the request (the server then applies
                 *     a default or fails), so the contract leaves it optional. The kit always sends it. The description
                 *     gives the 37 scope names and says the list is space-separated; that the parameter takes only those
                 *     names, joined by single spaces, is the contract's reading (see ScopeList): how the service treats an
                 *     unknown name is not shown.
                 */
                scope?: components["parameters"]["Scope"];
                /**
                 * @description An unpredictable random value, returned unchanged on the callback. The client stores it for the
                 *     browser session, never reuses it, and compares the returned value exactly with the stored one,
                 *     rejecting the response on any mismatch before any exchange (RFC 6749 §10.12).
                 */
                state: components["parameters"]["State"];
                /**
                 * @description `BASE64URL(SHA256(code_verifier))` without padding (RFC 7636 §4.2): always 43 characters of
                 *     `A-Z a-z 0-9 - _`.
                 *
                 *     **Assumption (not in the service description):** The service description lists code_challenge
                 *     without marking it required, but requires code_challenge_method and PKCE for every public
                 *     integration. RFC 7636 §4.3 makes code_challenge REQUIRED whenever PKCE is used, so the contract
                 *     requires it.
                 */
                code_challenge: components["parameters"]["CodeChallenge"];
                /** @description Must be `S256` (RFC 7636 §4.3). `plain` is not accepted. */
                code_challenge_method: components["parameters"]["CodeChallengeMethod"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description A page where the user signs in and approves or denies the request.
             *
             *     **Assumption (not in the service description):** The approval step is not shown beyond "after
             *     approval". RFC 6749 §4.1.1 lets the server authenticate the user and obtain the decision by means of
             *     its own; this contract only says it is an HTML page.
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /**
             * @description The browser is sent back to `redirect_uri`. On approval the query carries `code` and the
             *     unchanged `state` (RFC 6749 §4.1.2). On denial or another error with a valid
             *     `redirect_uri`, it carries `error` (such as `access_denied` or `invalid_request`) and the
             *     unchanged `state` (RFC 6749 §4.1.2.1).
             *
             *     **Assumption (not in the service description):** The status code of the redirect is not shown; RFC
             *     6749 §1.7 lets the authorization server redirect the user-agent by any means (an HTTP 302 is its
             *     example), and the contract takes 302.
             */
            302: {
                headers: {
                    /**
                     * @description The registered `redirect_uri` with the result in its query: on approval `code` and the
                     *     unchanged `state` (service description §4; RFC 6749 §4.1.2), otherwise `error` (RFC 6749
                     *     §4.1.2.1).
                     *
                     *     **Assumption (not in the service description):** Error redirects are not shown; they follow RFC 6749
                     *     §4.1.2.1, which returns state whenever the request carried one (so the pattern requires state beside
                     *     code only: a request without state is answered with an error that cannot return it).
                     */
                    Location: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /**
             * @description The client or `redirect_uri` is not valid (`redirect_uri` does not exactly match a registered
             *     URI, or `client_id` is unknown). The error is shown to the user as a page and is never
             *     redirected (RFC 6749 §4.1.2.1).
             *
             *     **Assumption (not in the service description):** The description says only that such a request "is
             *     not valid". RFC 6749 §4.1.2.1 forbids redirecting it and says to inform the resource owner; the
             *     status 400 is the contract's choice.
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
        };
    };
    exchangeToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TokenRequest"];
            };
        };
        responses: {
            /**
             * @description Tokens issued. The access token lives 15 minutes, the refresh token 30 days.
             *
             *     A code exchange (`grant_type=authorization_code`) answers with all four fields,
             *     `TokenResponse` (service description §2 and §4). A refresh answers with
             *     `RefreshTokenResponse`, whose `refresh_token` the contract makes optional: the server sends
             *     one when it rotates the refresh token (service description §4: the response "may rotate").
             *     OpenAPI cannot tie a response schema to a field of the request, so the schema here admits
             *     both, and `x-response-schema-by-grant-type` names the one each grant must match: the kit's
             *     token manager, the sandbox's contract tests and the contract's Prism tests check that
             *     mapping.
             *
             *     **Assumption (not in the service description):** The status code of a successful token response is
             *     not shown; RFC 6749 §5.1 answers it with 200 (OK). That a refresh response leaves refresh_token out
             *     when it does not rotate is assumed from RFC 6749 §6 (see RefreshTokenResponse).
             */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    Pragma: components["headers"]["Pragma"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenResponse"] | components["schemas"]["RefreshTokenResponse"];
                };
            };
            400: components["responses"]["OAuthErrorResponse"];
        };
    };
    revokeToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/x-www-form-urlencoded": components["schemas"]["RevocationRequest"];
                "application/json": components["schemas"]["RevocationRequest"];
            };
        };
        responses: {
            /**
             * @description The token is revoked and the integration disconnected, or the token was already invalid
             *     (RFC 7009 §2.2). The body, if any, is to be ignored.
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /**
             * @description A malformed request, an unknown client (`invalid_client`) or a token type the server does
             *     not revoke (`unsupported_token_type`), with an RFC 6749 §5.2 error body (RFC 7009 §2.2.1):
             *     assumed, as the whole revocation response (the description does not show it).
             */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OAuthError"];
                };
            };
        };
    };
    getAuthenticatedUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description The authenticated user. The example record (`id`, `name`, `email`) is illustrative only:
             *     the service description does not show the record's fields.
             *
             *     **Assumption (not in the service description):** The status code of a successful answer is not
             *     shown; the contract takes 200 (OK), the status of a successful GET that returns a representation
             *     (RFC 9110 §15.3.1).
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
        };
    };
}
