package io.github.tenantintegration.tenanttest;

/**
 * A sandbox that could not be started or did not answer ({@code SANDBOX_FAILED}), or a sign-in it did
 * not approve ({@code SIGN_IN_FAILED}): the Python and Go kits' codes. It never holds a token.
 */
public final class SandboxException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The codes of this package. */
    public enum Code {
        /** The sandbox could not be started, exited, or did not answer. */
        SANDBOX_FAILED,
        /** The sandbox did not approve a sign-in. */
        SIGN_IN_FAILED
    }

    private final Code code;

    SandboxException(Code code, String message, Throwable cause) {
        super(code.name() + ": " + message, cause);
        this.code = code;
    }

    /** The stable code. */
    public Code code() {
        return code;
    }
}
