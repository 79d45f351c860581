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
         * @example profile:read
         * @example profile:read tickets:read tickets:write
         */
        ScopeList: string;
        /**
         * @description The original PKCE verifier: 43–128 URL-safe characters (service description §2, §8), created
         *     from a cryptographically random source and never reused.
         * @example dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk
         */
        CodeVerifier: string;
        /**
         * Authorization code grant
         * @description Exchanges the code received on the callback for tokens (RFC 6749 §4.1.3, RFC 7636 §4.5). Sent as
         *     JSON. No client secret is sent (service description §4): a public client cannot keep one, and
         *     proves possession with the verifier.
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
            /** @description The code received on the callback. Single use. */
            code: string;
            code_verifier: components["schemas"]["CodeVerifier"];
        };
        /**
         * Refresh token grant
         * @description Obtains a new access token with a refresh token, before the access token expires. The response
         *     may rotate the refresh token; the client must then store the new one in place of the old.
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
        /** @description The body of `POST /oauth/token`, one of two grants told apart by `grant_type`. */
        TokenRequest: components["schemas"]["AuthorizationCodeGrantRequest"] | components["schemas"]["RefreshTokenGrantRequest"];
        /**
         * @description Bearer token for API calls. Lifetime 15 minutes from issue.
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
         * @example Bearer
         */
        TokenType: string;
        /**
         * Format: int32
         * @description Lifetime of the access token in seconds from issue; 900 (15 minutes) for this service.
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
             */
            scope?: string;
        };
        /**
         * Refresh response
         * @description The tokens issued by the refresh token grant (RFC 6749 §6). A new `refresh_token` is present when
         *     the server rotates it; the client must then store it in place of the old one.
         */
        RefreshTokenResponse: {
            access_token: components["schemas"]["AccessToken"];
            refresh_token?: components["schemas"]["RefreshToken"];
            token_type: components["schemas"]["TokenType"];
            expires_in: components["schemas"]["ExpiresIn"];
            /**
             * @description The granted scopes, space-separated. Present whenever they differ from those requested
             *     (RFC 6749 §5.1, §3.3); a refresh without `scope` requests the scopes originally granted (RFC 6749 §6).
             */
            scope?: string;
        };
        /**
         * OAuth error
         * @description An error of the token or revocation endpoint (RFC 6749 §5.2, RFC 7009 §2.2.1). `error` is one of
         *     `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
         *     `unsupported_grant_type`, `invalid_scope` or, for revocation, `unsupported_token_type`.
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
         */
        RevocationRequest: {
            /** @description The current access token. */
            token: string;
            /**
             * @description What `token` is (RFC 7009 §2.1): `access_token` for this service's revoke, or `refresh_token`.
             *     A hint the server does not know is ignored, and the answer stays 200 (RFC 7009 §2.1, §2.2).
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
         *     `WWW-Authenticate` challenge names the required scope (RFC 6750 §3.1, `insufficient_scope`).
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
        /** @description Identifier of the OAuth client (RFC 6749 §2.2). */
        ClientId: string;
        /**
         * @description Where the browser returns after approval. Must exactly match (character for character) a URI
         *     registered for the OAuth client, with no exception (service description §2 and §7): a loopback
         *     URI of a command-line tool is registered with its fixed port and sent with that same port. It is
         *     percent-encoded in the query. A mismatch is not redirected (RFC 6749 §4.1.2.1).
         */
        RedirectUri: string;
        /**
         * @description Space-separated list of scope names, percent-encoded in the query (service description §2). The
         *     contract admits only the 37 names of the `tenantOAuth` security scheme.
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
         */
        CodeChallenge: string;
        /** @description Must be `S256` (RFC 7636 §4.3). `plain` is not accepted. */
        CodeChallengeMethod: "S256";
    };
    requestBodies: never;
    headers: {
        /** @description `no-store`: tokens must never be cached (RFC 6749 §5.1). */
        "Cache-Control": "no-store";
        /** @description `no-cache`, for HTTP/1.0 caches, next to `Cache-Control: no-store` (RFC 6749 §5.1). */
        Pragma: "no-cache";
        /**
         * @description The bearer challenge of RFC 6750 §3: `Bearer error="invalid_token"` for a malformed, expired or
         *     revoked token; a challenge with a `realm` and no error code when the request sent no token at all
         *     (RFC 6750 §3 has the scheme followed by at least one attribute): the sandbox sends
         *     `Bearer realm="tenant-sandbox"`.
         */
        InvalidTokenChallenge: string;
        /**
         * @description The bearer challenge for a token that lacks the route's scope:
         *     `Bearer error="insufficient_scope", scope="profile:read"`, naming the scope the route requires.
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
                /** @description Identifier of the OAuth client (RFC 6749 §2.2). */
                client_id: components["parameters"]["ClientId"];
                /**
                 * @description Where the browser returns after approval. Must exactly match (character for character) a URI
                 *     registered for the OAuth client, with no exception (service description §2 and §7): a loopback
                 *     URI of a command-line tool is registered with its fixed port and sent with that same port. It is
                 *     percent-encoded in the query. A mismatch is not redirected (RFC 6749 §4.1.2.1).
                 */
                redirect_uri: components["parameters"]["RedirectUri"];
                /**
                 * @description Space-separated list of scope names, percent-encoded in the query (service description §2). The
                 *     contract admits only the 37 names of the `tenantOAuth` security scheme.
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
            /** @description A page where the user signs in and approves or denies the request. */
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
             */
            302: {
                headers: {
                    /**
                     * @description The registered `redirect_uri` with the result in its query: `code` on approval
                     *     (RFC 6749 §4.1.2), `error` otherwise (RFC 6749 §4.1.2.1).
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
             *     not revoke (`unsupported_token_type`), with an RFC 6749 §5.2 error body (RFC 7009 §2.2.1).
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
