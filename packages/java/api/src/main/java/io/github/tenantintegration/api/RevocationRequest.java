// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Revocation request: Revokes the current access token, which disconnects the integration (service
 * description §3, §4). Send <code>token</code>, the client's <code>client_id</code>, and optionally
 * <code>token_type_hint</code>.
 *
 * <p><b>Assumption (not in the service description):</b> The request shape, method details and
 * parameter names of /oauth/revoke are not shown. They follow RFC 7009 §2.1: a POST with token
 * (REQUIRED) and token_type_hint (OPTIONAL), in the form encoding of RFC 7009 or in JSON like this
 * service's token endpoint. A public client identifies itself with its client_id: RFC 7009 §2.1
 * refers to client authentication as in RFC 6749 §2.3, and RFC 7009 §5 has the request of a public
 * client contain a valid client_id. The kit always sends it. The schema still admits a request
 * without it, since the token names its client; the sandbox answers one 200 (whether the service
 * does is not shown). Any other field is a single string, since a form value is one string and a
 * repeated parameter is malformed (RFC 6749 §3.2, RFC 7009 §2.2.1).
 *
 * <p>Holds a secret: {@link #toString()} shows it as <code>[redacted]</code>.
 *
 * @param token <code>token</code>: The current access token.
 * @param tokenTypeHint <code>token_type_hint</code>: What <code>token</code> is (RFC 7009 §2.1):
 *     <code>access_token</code> for this service's revoke, or <code>refresh_token</code>. A hint
 *     the server does not know is ignored, and the answer stays 200 (RFC 7009 §2.1, §2.2).
 *     <b>Assumption (not in the service description):</b> The hint is not shown. RFC 7009 §2.1
 *     defines access_token and refresh_token and lets the server ignore the hint and search every
 *     token type; the values come from a registry that extensions add to (RFC 7009 §4.1.2), so the
 *     contract keeps the hint an open string and an unknown hint changes nothing (RFC 7009 §2.2:
 *     200 whether or not a token was revoked). Optional: null when absent.
 * @param clientId <code>client_id</code>: The OAuth client identifier (RFC 7009 §5, RFC 6749 §2.3).
 *     Optional: null when absent.
 * @param additionalProperties any other member, by name (never null; empty when none)
 */
public record RevocationRequest(
        String token,
        String tokenTypeHint,
        String clientId,
        Map<String, String> additionalProperties) {
    /**
     * Checks that every required component is given, and keeps an unmodifiable copy of the map.
     *
     * @throws NullPointerException naming the first required component that is null
     */
    public RevocationRequest {
        Objects.requireNonNull(token, "token");
        if (additionalProperties != null) {
            for (String known : java.util.List.of("token", "token_type_hint", "client_id")) {
                if (additionalProperties.containsKey(known)) {
                    throw new IllegalArgumentException(known + " is a component, not an additional property");
                }
            }
        }
        additionalProperties = additionalProperties == null
                ? Map.of()
                : Collections.unmodifiableMap(new LinkedHashMap<>(additionalProperties));
    }

    /**
     * This value as the JSON text the contract describes: its members in the contract's order, an
     * optional one left out when null, no spaces.
     *
     * @return a JSON object
     */
    public String toJson() {
        JsonText json = new JsonText();
        json.member("token", token);
        json.member("token_type_hint", tokenTypeHint);
        json.member("client_id", clientId);
        additionalProperties.forEach(json::member);
        return json.end();
    }

    /**
     * Every component but the secrets, which print as <code>[redacted]</code>: a record would print
     * them all.
     */
    @Override
    public String toString() {
        return "RevocationRequest[token=[redacted], tokenTypeHint="
                + tokenTypeHint + ", clientId="
                + clientId + ", additionalProperties="
                + additionalProperties.keySet() + "]";
    }
}
