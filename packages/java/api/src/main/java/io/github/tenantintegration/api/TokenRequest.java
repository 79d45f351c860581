// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

/**
 * The body of <code>POST /oauth/token</code>, one of two grants told apart by
 * <code>grant_type</code>.
 *
 * <p><b>Assumption (not in the service description):</b> What the token endpoint does with a field
 * it does not know is not shown. RFC 6749 §3.2 says the server MUST ignore unrecognized request
 * parameters, so the grants do not forbid other fields.
 *
 * <p>One of {@link AuthorizationCodeGrantRequest}, {@link RefreshTokenGrantRequest}.
 */
public sealed interface TokenRequest permits AuthorizationCodeGrantRequest, RefreshTokenGrantRequest {
    /** The value of <code>grant_type</code> that tells the options apart. */
    String grantType();

    /** This value as the JSON text the contract describes. */
    String toJson();
}
