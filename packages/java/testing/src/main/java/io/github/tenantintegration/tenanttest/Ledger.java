package io.github.tenantintegration.tenanttest;

import java.util.List;

/**
 * The sandbox's refresh-token ledger ({@code GET /__sandbox/ledger}): which refresh token was presented,
 * when, by whom, with what outcome; a token is named by its SHA-256 fingerprint, never by its value.
 *
 * @param refreshTokens every refresh token presented, in the order of its first presentation
 * @param reuses every reuse detection (a rotated-away token presented again, RFC 9700 §4.14.2)
 * @param families every sign-in (grant) seen, and whether it was revoked
 */
public record Ledger(List<RefreshToken> refreshTokens, List<Reuse> reuses, List<Family> families) {
    /** Keeps unmodifiable copies. */
    public Ledger {
        refreshTokens = List.copyOf(refreshTokens);
        reuses = List.copyOf(reuses);
        families = List.copyOf(families);
    }

    /**
     * One refresh token that was presented at least once.
     *
     * @param fingerprint its SHA-256, lowercase hex
     * @param family its family ({@code fam_…}), or null
     * @param presentations oldest first; more than one means it was presented again
     */
    public record RefreshToken(String fingerprint, String family, List<Presentation> presentations) {
        /** Keeps an unmodifiable copy. */
        public RefreshToken {
            presentations = List.copyOf(presentations);
        }
    }

    /**
     * One presentation of a refresh token.
     *
     * @param seq the event's {@code seq}
     * @param actor the request's {@code Sandbox-Actor} header, or null
     * @param outcome {@code ok}, or the OAuth error code
     * @param detail why, or null
     */
    public record Presentation(long seq, String actor, String outcome, String detail) {}

    /**
     * A reuse detection, which revoked its family.
     *
     * @param fingerprint the rotated-away token presented again
     * @param family the family it revoked
     * @param actor who presented it, or null
     */
    public record Reuse(String fingerprint, String family, String actor) {}

    /**
     * A family (one sign-in).
     *
     * @param id {@code fam_…}
     * @param revoked whether it was revoked while the ledger recorded
     * @param revokedBy {@code reuse}, {@code revocation} or {@code code_reuse}, or null
     */
    public record Family(String id, boolean revoked, String revokedBy) {}

    /** Whether no refresh token was presented twice. */
    public boolean noTokenPresentedTwice() {
        return refreshTokens.stream().allMatch(token -> token.presentations().size() <= 1);
    }
}
