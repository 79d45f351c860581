package io.github.tenantintegration.tokenmanager;

/**
 * The RFC 8252 loopback sign-in failed: {@code CALLBACK_PORT_IN_USE} ({@link #port()}),
 * {@code REDIRECT_URI_REFUSED} ({@link #status()}), {@code CALLBACK_TIMEOUT}.
 */
public final class LoopbackException extends TokenManagerException {
    private static final long serialVersionUID = 1L;

    private final int port;
    private final int status;

    /**
     * A failure of the loopback sign-in.
     *
     * @param code its code
     * @param message why
     * @param port the loopback port, or 0
     * @param status the tenant's HTTP status, or 0
     * @param cause the cause, or null
     */
    public LoopbackException(ErrorCode code, String message, int port, int status, Throwable cause) {
        super(code, message, cause);
        this.port = port;
        this.status = status;
    }

    /** The loopback port of {@code CALLBACK_PORT_IN_USE}, else 0. */
    public int port() {
        return port;
    }

    /** The tenant's status of {@code REDIRECT_URI_REFUSED}, else 0. */
    public int status() {
        return status;
    }
}
