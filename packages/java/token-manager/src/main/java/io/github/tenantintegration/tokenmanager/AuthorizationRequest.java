package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.api.Scope;
import java.net.URI;
import java.time.Instant;
import java.util.List;

/**
 * Where to send the browser to sign in: the authorize URL (RFC 6749 §4.1.1, RFC 7636 §4.3). The URL
 * carries the state, so {@link #toString()} leaves it out.
 *
 * @param url the authorize URL to open
 * @param expiresAt when the pending sign-in expires
 * @param scopes the scopes asked for
 * @param redirectUri where the tenant sends the browser back
 */
public record AuthorizationRequest(URI url, Instant expiresAt, List<Scope> scopes, String redirectUri) {
    /** Keeps an unmodifiable copy of the scopes. */
    public AuthorizationRequest {
        scopes = List.copyOf(scopes);
    }

    /** Everything but the URL, which holds the state. */
    @Override
    public String toString() {
        return "AuthorizationRequest[url=[redacted], expiresAt=" + expiresAt + ", scopes=" + scopes + ", redirectUri="
                + redirectUri + "]";
    }
}
