package io.github.tenantintegration.tokenmanager;

import java.util.Objects;

/**
 * Every error of the token manager, its storages and the loopback sign-in: unchecked, with a stable
 * {@link #code()} (the kits' shared strings) and a message that says why. No message, field or
 * cause holds a token, an authorization code, a PKCE verifier or a state: messages are written
 * without them and causes are scrubbed.
 *
 * <pre>
 * TokenManagerException                 code(): every ErrorCode
 * ├── OAuthException                    OAUTH_ERROR, AUTHORIZATION_DENIED: status(), error(), errorDescription()
 * │   └── SessionEndedException         SESSION_ENDED: invalid_grant on refresh; tokens cleared
 * ├── TransientException                TRANSIENT: status(), attempts(), retryAfter(); tokens kept
 * ├── StorageException                  FILE_CORRUPT, FILE_UNSAFE, IO_FAILED, LOCK_TIMEOUT, COMMAND_FAILED,
 * │                                     UNEXPECTED_REPLY, REPLICATION_TIMEOUT, LOCK_UNAVAILABLE, LEASE_LOST: path()
 * └── LoopbackException                 CALLBACK_PORT_IN_USE (port()), REDIRECT_URI_REFUSED (status()),
 *                                       CALLBACK_TIMEOUT
 * </pre>
 *
 * <p>The manager reports a storage's failure as {@code STORAGE_FAILED} whose cause is the storage's
 * {@link StorageException}; a lock that stayed held is {@code LOCK_TIMEOUT} itself.
 */
public class TokenManagerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    /**
     * An error of the kit.
     *
     * @param code its stable code
     * @param message why, without any secret
     * @param cause what caused it (scrubbed), or null
     */
    public TokenManagerException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
    }

    /** An error of the kit without a cause. */
    public TokenManagerException(ErrorCode code, String message) {
        this(code, message, null);
    }

    /** The stable code: branch on it, never on the message. */
    public ErrorCode code() {
        return code;
    }

    /** The message without the code: why it happened. */
    public String reason() {
        String message = super.getMessage();
        return message == null ? "" : message;
    }

    /** The code and the message, e.g. {@code NOT_SIGNED_IN: there are no tokens; sign in first}. */
    @Override
    public String getMessage() {
        String message = super.getMessage();
        return message == null || message.isEmpty() ? code.name() : code.name() + ": " + message;
    }
}
