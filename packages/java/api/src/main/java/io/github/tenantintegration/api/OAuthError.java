// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

import java.util.Objects;

/**
 * OAuth error: An error of the token or revocation endpoint (RFC 6749 §5.2, RFC 7009 §2.2.1).
 * <code>error</code> is one of <code>invalid_request</code>, <code>invalid_client</code>,
 * <code>invalid_grant</code>, <code>unauthorized_client</code>,
 * <code>unsupported_grant_type</code>, <code>invalid_scope</code> or, for revocation,
 * <code>unsupported_token_type</code>.
 *
 * <p><b>Assumption (not in the service description):</b> The error body shape and the OAuth error
 * codes are not shown. They follow RFC 6749 §5.2 (a JSON object with error, optional
 * error_description and error_uri) and RFC 7009 §2.2.1. error stays a string so that codes from the
 * OAuth extensions registry (RFC 6749 §8.5) are not rejected; its characters, and those of
 * error_description, are the ones RFC 6749 §5.2 allows (%x20-21 / %x23-5B / %x5D-7E: printable
 * ASCII without the double quote and the backslash).
 *
 * @param error <code>error</code>: A single ASCII error code (RFC 6749 §5.2).
 * @param errorDescription <code>error_description</code>: Human-readable text to help the
 *     developer; never shown as is to end users. Optional: null when absent.
 * @param errorUri <code>error_uri</code>: A page about the error. Optional: null when absent.
 */
public record OAuthError(String error, String errorDescription, String errorUri) {
    /**
     * Checks that every required component is given.
     *
     * @throws NullPointerException naming the first required component that is null
     */
    public OAuthError {
        Objects.requireNonNull(error, "error");
    }

    /**
     * This value as the JSON text the contract describes: its members in the contract's order, an
     * optional one left out when null, no spaces.
     *
     * @return a JSON object
     */
    public String toJson() {
        JsonText json = new JsonText();
        json.member("error", error);
        json.member("error_description", errorDescription);
        json.member("error_uri", errorUri);
        return json.end();
    }
}
