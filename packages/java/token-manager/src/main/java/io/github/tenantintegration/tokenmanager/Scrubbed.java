package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.internal.Redact;
import java.util.Collection;

/**
 * The stand-in cause of an error whose text held (or may hold) a secret or a request: the original's
 * class name and scrubbed message, nothing else (no request, no body, no cause chain).
 */
final class Scrubbed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private Scrubbed(String text) {
        super(text, null, false, false);
    }

    /** A cause safe to attach: the kit's own error when it prints no secret, else a scrubbed copy. */
    static Throwable of(Throwable error, Collection<String> secrets) {
        if (error == null) return null;
        String text = String.valueOf(error.getMessage());
        String clean = Redact.scrub(text, secrets);
        if (error instanceof TokenManagerException && clean.equals(text)) return error;
        return new Scrubbed(error.getClass().getName() + ": " + clean);
    }

    @Override
    public String toString() {
        return getMessage();
    }
}
