// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
/**
 * The types of the Tenant Integration Service's contract ({@code spec/openapi.yaml}): a record per
 * request and response body, {@link io.github.tenantintegration.api.Scope} (the service's scopes)
 * and {@link io.github.tenantintegration.api.Schemas} (the constraints a type cannot say).
 *
 * <p>Where the service description leaves something open, the contract follows the governing RFC
 * and says so: those assumptions are part of each type's documentation, after the words
 * "Assumption (not in the service description):". Records holding a token, a code or a verifier
 * print them as {@code [redacted]}.
 */
package io.github.tenantintegration.api;
