package io.github.tenantintegration.tokenmanager;

/**
 * A change of the session, as {@link TokenManager.Builder#onChange} listeners receive it. It holds no
 * token.
 *
 * @param kind what happened
 * @param session the session after a sign-in or a refresh, else null
 * @param revoked true for the {@code SIGNED_OUT} that follows a revocation
 * @param error the {@code SESSION_ENDED} or {@code STORAGE_FAILED} error, else null
 */
public record Event(Kind kind, SessionInfo session, boolean revoked, TokenManagerException error) {
    /** What happened; the TypeScript, Python and Go kits' event names. */
    public enum Kind {
        /** {@code signed-in}: a sign-in completed. */
        SIGNED_IN("signed-in"),
        /** {@code signed-out}: the tokens were cleared on request (or after a revocation). */
        SIGNED_OUT("signed-out"),
        /** {@code tokens-refreshed}: a refresh stored new tokens. */
        TOKENS_REFRESHED("tokens-refreshed"),
        /** {@code session-ended}: the tenant refused the refresh token; the tokens were cleared. */
        SESSION_ENDED("session-ended"),
        /** {@code revoked}: the tenant revoked the session on request (RFC 7009). */
        REVOKED("revoked"),
        /** {@code storage-failed}: the storage failed; fresh tokens may be held in memory meanwhile. */
        STORAGE_FAILED("storage-failed");

        private final String value;

        Kind(String value) {
            this.value = value;
        }

        /** The kits' name of the event, e.g. {@code tokens-refreshed}. */
        public String value() {
            return value;
        }
    }

    static Event of(Kind kind) {
        return new Event(kind, null, false, null);
    }
}
