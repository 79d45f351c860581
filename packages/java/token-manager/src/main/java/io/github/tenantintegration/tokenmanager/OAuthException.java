package io.github.tenantintegration.tokenmanager;

/**
 * The tenant answered an OAuth error: a token or revocation request refused ({@code OAUTH_ERROR},
 * RFC 6749 §5.2, RFC 7009 §2.2.1) or a callback carrying {@code error} ({@code AUTHORIZATION_DENIED},
 * RFC 6749 §4.1.2.1). Its fields are scrubbed of every secret the manager knows.
 */
public class OAuthException extends TokenManagerException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String error;
    private final String errorDescription;
    private final String errorUri;

    OAuthException(ErrorCode code, String message, int status, String error, String errorDescription, String errorUri) {
        super(code, message);
        this.status = status;
        this.error = error;
        this.errorDescription = errorDescription;
        this.errorUri = errorUri;
    }

    /** The HTTP status of the answer; 0 for a callback. */
    public int status() {
        return status;
    }

    /** The OAuth error code, e.g. {@code invalid_grant} (RFC 6749 §5.2). */
    public String error() {
        return error;
    }

    /** The tenant's {@code error_description}, or null. */
    public String errorDescription() {
        return errorDescription;
    }

    /** The tenant's {@code error_uri}, or null. */
    public String errorUri() {
        return errorUri;
    }
}
