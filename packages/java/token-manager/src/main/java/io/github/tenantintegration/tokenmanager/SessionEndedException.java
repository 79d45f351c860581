package io.github.tenantintegration.tokenmanager;

/**
 * {@code SESSION_ENDED}: a refresh came back {@code invalid_grant} (the refresh token expired, was
 * revoked, or was presented after its rotation), so the tokens were cleared: sign in again. Assumption (not
 * in the service description, which shows no OAuth error code): the tenant answers a refused refresh
 * token with {@code invalid_grant} (RFC 6749 §5.2).
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc6749#section-5.2">RFC 6749 §5.2</a>
 */
public final class SessionEndedException extends OAuthException {
    private static final long serialVersionUID = 1L;

    SessionEndedException(OAuthException refused) {
        super(
                ErrorCode.SESSION_ENDED,
                "the refresh token was refused, so the tokens were cleared: sign in again (" + refused.reason() + ")",
                refused.status(),
                refused.error(),
                refused.errorDescription(),
                refused.errorUri());
    }
}
