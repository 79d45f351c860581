// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

import java.util.Objects;

/**
 * Refresh token grant: Obtains a new access token with a refresh token, before the access token
 * expires. The response may rotate the refresh token; the client must then store the new one in
 * place of the old.
 *
 * <p><b>Assumption (not in the service description):</b> The service description names only
 * grant_type=refresh_token and "a valid refresh token"; the other field names are not shown. They
 * follow RFC 6749 §6: refresh_token (REQUIRED) and scope (OPTIONAL). client_id is optional: RFC
 * 6749 §3.2.1 makes it a MUST only in the authorization_code request of an unauthenticated client,
 * and a MAY on other token requests; the refresh token identifies its client. The kit sends it. The
 * body is JSON like the authorization code grant.
 *
 * <p>Holds a secret: {@link #toString()} shows it as <code>[redacted]</code>.
 *
 * @param refreshToken <code>refresh_token</code>: The current refresh token. Never log it or put it
 *     in a URL.
 * @param clientId <code>client_id</code>: The OAuth client identifier (optional, RFC 6749 §3.2.1).
 *     Optional: null when absent.
 * @param scope <code>scope</code>: Space-separated scope names (service description §2:
 *     "space-separated list of scope names"), each one of the 37 names of the
 *     <code>tenantOAuth</code> security scheme, exactly as written there. An unknown name does not
 *     match, so a generated request cannot pass an invented scope as valid.
 *     <b>Assumption (not in the service description):</b> The description gives the 37 names and
 *     says the list is space-separated; it does not say how the service treats an unknown name or
 *     repeated spaces. The pattern allows exactly the 37 names, joined by single spaces, a subset
 *     of the scope-token grammar of RFC 6749 §3.3. Optional: null when absent.
 */
public record RefreshTokenGrantRequest(
        String refreshToken,
        String clientId,
        String scope)
        implements TokenRequest {
    /** The value of <code>grant_type</code>: {@value}. */
    public static final String GRANT_TYPE = "refresh_token";

    /**
     * Checks that every required component is given.
     *
     * @throws NullPointerException naming the first required component that is null
     */
    public RefreshTokenGrantRequest {
        Objects.requireNonNull(refreshToken, "refreshToken");
    }

    @Override
    public String grantType() {
        return GRANT_TYPE;
    }

    /**
     * This value as the JSON text the contract describes: its members in the contract's order, an
     * optional one left out when null, no spaces.
     *
     * @return a JSON object
     */
    @Override
    public String toJson() {
        JsonText json = new JsonText();
        json.member("grant_type", GRANT_TYPE);
        json.member("refresh_token", refreshToken);
        json.member("client_id", clientId);
        json.member("scope", scope);
        return json.end();
    }

    /**
     * Every component but the secrets, which print as <code>[redacted]</code>: a record would print
     * them all.
     */
    @Override
    public String toString() {
        return "RefreshTokenGrantRequest[refreshToken=[redacted], clientId="
                + clientId + ", scope="
                + scope + "]";
    }
}
