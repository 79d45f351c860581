// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

import java.util.Objects;

/**
 * Authorization code grant: Exchanges the code received on the callback for tokens (RFC 6749
 * §4.1.3, RFC 7636 §4.5). Sent as JSON. No client secret is sent (service description §4): a public
 * client cannot keep one, and proves possession with the verifier.
 *
 * <p><b>Assumption (not in the service description):</b> The service description lists the five
 * fields without a required column. RFC 6749 §4.1.3 makes grant_type, code, redirect_uri (when it
 * was in the authorization request, as here) and, for an unauthenticated client, client_id
 * REQUIRED, and RFC 7636 §4.5 makes code_verifier REQUIRED, so the contract requires all five.
 *
 * <p>Holds a secret: {@link #toString()} shows it as <code>[redacted]</code>.
 *
 * @param clientId <code>client_id</code>: The OAuth client identifier.
 * @param redirectUri <code>redirect_uri</code>: The redirect URI used in the authorization request,
 *     exactly.
 * @param code <code>code</code>: The code received on the callback. Single use.
 *     <b>Assumption (not in the service description):</b> That the code is single use is not shown.
 *     RFC 6749 §4.1.2 says the client MUST NOT use it more than once and the server MUST deny a
 *     second use, so a second exchange is answered 400 invalid_grant (RFC 6749 §5.2).
 * @param codeVerifier <code>code_verifier</code>: The original PKCE verifier: 43–128 URL-safe
 *     characters (service description §2, §8), created from a cryptographically random source and
 *     never reused. <b>Assumption (not in the service description):</b> The description says
 *     "URL-safe" without listing the characters. The contract reads it as the unreserved characters
 *     of RFC 7636 §4.1 (A-Z a-z 0-9 - . _ ~), the verifier's own grammar.
 */
public record AuthorizationCodeGrantRequest(
        String clientId,
        String redirectUri,
        String code,
        String codeVerifier)
        implements TokenRequest {
    /** The value of <code>grant_type</code>: {@value}. */
    public static final String GRANT_TYPE = "authorization_code";

    /**
     * Checks that every required component is given.
     *
     * @throws NullPointerException naming the first required component that is null
     */
    public AuthorizationCodeGrantRequest {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(redirectUri, "redirectUri");
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(codeVerifier, "codeVerifier");
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
        json.member("client_id", clientId);
        json.member("redirect_uri", redirectUri);
        json.member("code", code);
        json.member("code_verifier", codeVerifier);
        return json.end();
    }

    /**
     * Every component but the secrets, which print as <code>[redacted]</code>: a record would print
     * them all.
     */
    @Override
    public String toString() {
        return "AuthorizationCodeGrantRequest[clientId="
                + clientId + ", redirectUri="
                + redirectUri + ", code=[redacted], codeVerifier=[redacted]]";
    }
}
