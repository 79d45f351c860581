package io.github.tenantintegration.tokenmanager;

import java.time.Duration;

/**
 * {@code TRANSIENT}: a token request got no answer, timed out, or was answered 429 or 5xx. The tokens
 * are kept: try again later ({@link #retryAfter()} says when, if the tenant did).
 */
public final class TransientException extends TokenManagerException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final int attempts;
    private final Duration retryAfter;
    /** Whether the request may have reached the tenant (not when no connection could be made, nor 429 or 503). */
    private final transient boolean sent;

    TransientException(int status, int attempts, boolean sent, Duration retryAfter, Throwable cause) {
        super(ErrorCode.TRANSIENT, describe(status, attempts, retryAfter), cause);
        this.status = status;
        this.attempts = attempts;
        this.sent = sent;
        this.retryAfter = retryAfter;
    }

    private static String describe(int status, int attempts, Duration retryAfter) {
        String what = status == 0 ? "no answer" : "HTTP " + status;
        String message = what + " (" + attempts + (attempts == 1 ? " attempt)" : " attempts)");
        if (retryAfter != null && !retryAfter.isZero()) message += "; retry after " + retryAfter.toMillis() + " ms";
        return message;
    }

    /** The HTTP status of the last answer (429, 5xx), or 0 when there was none. */
    public int status() {
        return status;
    }

    /** How many requests were made. */
    public int attempts() {
        return attempts;
    }

    /** The last answer's {@code Retry-After} (RFC 9110 §10.2.3), or zero without one. */
    public Duration retryAfter() {
        return retryAfter == null ? Duration.ZERO : retryAfter;
    }

    boolean sent() {
        return sent;
    }
}
