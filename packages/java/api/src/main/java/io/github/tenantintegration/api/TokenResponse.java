// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

import java.util.Objects;

/**
 * Token response: The tokens issued by the authorization code grant (RFC 6749 §5.1). All four
 * fields are present.
 *
 * <p>Holds a secret: {@link #toString()} shows it as <code>[redacted]</code>.
 *
 * @param accessToken <code>access_token</code>: Bearer token for API calls. Lifetime 15 minutes
 *     from issue. <b>Assumption (not in the service description):</b> The form of the access token
 *     is not shown. It is sent as "Authorization: Bearer &lt;ACCESS_TOKEN&gt;" (service description
 *     §5.6), whose credentials are a b64token (RFC 6750 §2.1), so the contract takes that syntax:
 *     letters, digits and - . _ ~ + /, then any number of =.
 * @param refreshToken <code>refresh_token</code>: Obtains new access tokens. Lifetime 30 days from
 *     issue. May be rotated on refresh: store the new one in place of the old. Never log it, put it
 *     in a URL or give it to a third party.
 * @param tokenType <code>token_type</code>: The type of the access token; use it in the
 *     <code>Authorization</code> header as <code>Bearer</code>.
 *     <b>Assumption (not in the service description):</b> The value of token_type is not shown. The
 *     API takes "Authorization: Bearer", so the token is a bearer token (RFC 6750 §4, RFC 6749
 *     §7.1) and the value is "Bearer", compared case-insensitively (RFC 6749 §5.1). The contract
 *     keeps the type a string whose pattern admits "Bearer" in any casing and nothing else, so that
 *     another casing is not rejected.
 * @param expiresIn <code>expires_in</code>: Lifetime of the access token in seconds from issue; 900
 *     (15 minutes) for this service. <b>Assumption (not in the service description):</b> The unit
 *     and form of expires_in are not shown, only that it is the number of the access token
 *     lifetime. RFC 6749 §5.1 defines it as the lifetime in seconds, so the 15 minutes of the
 *     description are 900, and RFC 6749 Appendix A.14 writes it as digits, so it is an integer.
 *     That it is positive and fits in 32 bits is the contract's bound: a lifetime of 15 minutes is
 *     both.
 * @param scope <code>scope</code>: The granted scopes, space-separated. Present whenever the
 *     granted scope differs from the requested one; it may be left out when they are the same (RFC
 *     6749 §5.1, §3.3). <b>Assumption (not in the service description):</b> The description does
 *     not show a scope field in the token response. RFC 6749 §5.1 makes it OPTIONAL if the granted
 *     scope is identical to the one the client requested and REQUIRED otherwise, and RFC 6749 §3.3
 *     requires the server to tell the client when it grants a different scope. The schema cannot
 *     compare it with the request, so it stays an optional property here; a client that finds it
 *     absent takes the requested scopes as granted. Optional: null when absent.
 */
public record TokenResponse(
        String accessToken,
        String refreshToken,
        String tokenType,
        int expiresIn,
        String scope) {
    /**
     * Checks that every required component is given.
     *
     * @throws NullPointerException naming the first required component that is null
     */
    public TokenResponse {
        Objects.requireNonNull(accessToken, "accessToken");
        Objects.requireNonNull(refreshToken, "refreshToken");
        Objects.requireNonNull(tokenType, "tokenType");
    }

    /**
     * This value as the JSON text the contract describes: its members in the contract's order, an
     * optional one left out when null, no spaces.
     *
     * @return a JSON object
     */
    public String toJson() {
        JsonText json = new JsonText();
        json.member("access_token", accessToken);
        json.member("refresh_token", refreshToken);
        json.member("token_type", tokenType);
        json.member("expires_in", expiresIn);
        json.member("scope", scope);
        return json.end();
    }

    /**
     * Every component but the secrets, which print as <code>[redacted]</code>: a record would print
     * them all.
     */
    @Override
    public String toString() {
        return "TokenResponse[accessToken=[redacted], refreshToken=[redacted], tokenType="
                + tokenType + ", expiresIn="
                + expiresIn + ", scope="
                + scope + "]";
    }
}
