// GENERATED from spec/dist/openapi.json by packages/java/generator: do not edit by hand.
// Change the contract in spec/ and run `pnpm --filter @tenant-integration/java generate`.
package io.github.tenantintegration.api;

/**
 * The constraints of the contract's string and number schemas, which a type cannot say: patterns
 * (regular expressions that <code>java.util.regex</code> reads as the contract means them),
 * lengths, bounds and lifetimes.
 */
public final class Schemas {
    private Schemas() {}

    /**
     * Scope list: Space-separated scope names (service description §2: "space-separated list of
     * scope names"), each one of the 37 names of the <code>tenantOAuth</code> security scheme,
     * exactly as written there. An unknown name does not match, so a generated request cannot pass
     * an invented scope as valid.
     *
     * <p><b>Assumption (not in the service description):</b> The description gives the 37 names and
     * says the list is space-separated; it does not say how the service treats an unknown name or
     * repeated spaces. The pattern allows exactly the 37 names, joined by single spaces, a subset
     * of the scope-token grammar of RFC 6749 §3.3.
     */
    public static final class ScopeList {
        private ScopeList() {}

        /** The pattern every value matches. */
        public static final String PATTERN = "^(?:profile:read|users:read|users:write|contacts:read|contacts:write|tickets:read|tickets:write|files:read|files:write|settings:read|settings:write|custom-fields:read|custom-fields:write|math-scripts:read|math-scripts:write|policy-groups:read|policy-groups:write|products:read|products:write|projects:read|devices:read|contracts:read|contract-options:read|record-types:read|mail-messages:read|mail-messages:write|ticket-filters:read|ticket-filters:write|providers:read|providers:write|schemas:read|table-layouts:read|text-templates:read|text-templates:write|transfers:read|transfers:write|realtime:connect)(?: (?:profile:read|users:read|users:write|contacts:read|contacts:write|tickets:read|tickets:write|files:read|files:write|settings:read|settings:write|custom-fields:read|custom-fields:write|math-scripts:read|math-scripts:write|policy-groups:read|policy-groups:write|products:read|products:write|projects:read|devices:read|contracts:read|contract-options:read|record-types:read|mail-messages:read|mail-messages:write|ticket-filters:read|ticket-filters:write|providers:read|providers:write|schemas:read|table-layouts:read|text-templates:read|text-templates:write|transfers:read|transfers:write|realtime:connect))*$";
    }

    /**
     * CodeVerifier: The original PKCE verifier: 43–128 URL-safe characters (service description §2,
     * §8), created from a cryptographically random source and never reused.
     *
     * <p><b>Assumption (not in the service description):</b> The description says "URL-safe"
     * without listing the characters. The contract reads it as the unreserved characters of RFC
     * 7636 §4.1 (A-Z a-z 0-9 - . _ ~), the verifier's own grammar.
     */
    public static final class CodeVerifier {
        private CodeVerifier() {}

        /** The pattern every value matches. */
        public static final String PATTERN = "^[A-Za-z0-9._~-]{43,128}$";

        /** The fewest characters a value has. */
        public static final int MIN_LENGTH = 43;

        /** The most characters a value has. */
        public static final int MAX_LENGTH = 128;
    }

    /**
     * AccessToken: Bearer token for API calls. Lifetime 15 minutes from issue.
     *
     * <p><b>Assumption (not in the service description):</b> The form of the access token is not
     * shown. It is sent as "Authorization: Bearer &lt;ACCESS_TOKEN&gt;" (service description §5.6),
     * whose credentials are a b64token (RFC 6750 §2.1), so the contract takes that syntax: letters,
     * digits and - . _ ~ + /, then any number of =.
     */
    public static final class AccessToken {
        private AccessToken() {}

        /** The pattern every value matches. */
        public static final String PATTERN = "^[A-Za-z0-9._~+/-]+=*$";

        /** The fewest characters a value has. */
        public static final int MIN_LENGTH = 1;

        /** How long a token of this kind lives, in seconds. */
        public static final int LIFETIME_SECONDS = 900;
    }

    /**
     * RefreshToken: Obtains new access tokens. Lifetime 30 days from issue. May be rotated on
     * refresh: store the new one in place of the old. Never log it, put it in a URL or give it to a
     * third party.
     */
    public static final class RefreshToken {
        private RefreshToken() {}

        /** The fewest characters a value has. */
        public static final int MIN_LENGTH = 1;

        /** How long a token of this kind lives, in seconds. */
        public static final int LIFETIME_SECONDS = 2592000;
    }

    /**
     * TokenType: The type of the access token; use it in the <code>Authorization</code> header as
     * <code>Bearer</code>.
     *
     * <p><b>Assumption (not in the service description):</b> The value of token_type is not shown.
     * The API takes "Authorization: Bearer", so the token is a bearer token (RFC 6750 §4, RFC 6749
     * §7.1) and the value is "Bearer", compared case-insensitively (RFC 6749 §5.1). The contract
     * keeps the type a string whose pattern admits "Bearer" in any casing and nothing else, so that
     * another casing is not rejected.
     */
    public static final class TokenType {
        private TokenType() {}

        /** The pattern every value matches. */
        public static final String PATTERN = "^[Bb][Ee][Aa][Rr][Ee][Rr]$";
    }

    /**
     * ExpiresIn: Lifetime of the access token in seconds from issue; 900 (15 minutes) for this
     * service.
     *
     * <p><b>Assumption (not in the service description):</b> The unit and form of expires_in are
     * not shown, only that it is the number of the access token lifetime. RFC 6749 §5.1 defines it
     * as the lifetime in seconds, so the 15 minutes of the description are 900, and RFC 6749
     * Appendix A.14 writes it as digits, so it is an integer. That it is positive and fits in 32
     * bits is the contract's bound: a lifetime of 15 minutes is both.
     */
    public static final class ExpiresIn {
        private ExpiresIn() {}

        /** Every value is greater than this. */
        public static final int EXCLUSIVE_MINIMUM = 0;
    }
}
