package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.api.Schemas;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * A PKCE code verifier and its S256 challenge (RFC 7636). The verifier is a secret until the
 * exchange: {@link #toString()} shows only the challenge. S256 is the only method the service
 * accepts, so it is the only one here.
 *
 * @param verifier 43 to 128 characters of {@code A-Z a-z 0-9 - . _ ~} (RFC 7636 §4.1)
 * @param challenge {@code BASE64URL(SHA256(ASCII(verifier)))} (RFC 7636 §4.2)
 * @see <a href="https://www.rfc-editor.org/rfc/rfc7636">RFC 7636</a>
 */
public record PkcePair(String verifier, String challenge) {
    private static final Pattern VERIFIER = Pattern.compile(Schemas.CodeVerifier.PATTERN);
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * Checks that the challenge is the verifier's.
     *
     * @throws TokenManagerException {@code INVALID_VERIFIER} when the verifier is malformed or the
     *     challenge is not its S256 challenge
     */
    public PkcePair {
        if (!challenge(verifier).equals(challenge)) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_VERIFIER, "the challenge is not the verifier's S256 challenge");
        }
    }

    /**
     * A verifier of {@code length} characters from the JDK's CSPRNG ({@link SecureRandom}), each
     * carrying 6 uniformly random bits, and its S256 challenge.
     *
     * @param length 43 to 128; 64 is a good choice
     * @throws TokenManagerException {@code INVALID_VERIFIER} for a length outside 43..128
     * @see <a href="https://www.rfc-editor.org/rfc/rfc7636#section-4.1">RFC 7636 §4.1</a>
     */
    public static PkcePair generate(int length) {
        if (length < Schemas.CodeVerifier.MIN_LENGTH || length > Schemas.CodeVerifier.MAX_LENGTH) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_VERIFIER,
                    "the verifier length must be from " + Schemas.CodeVerifier.MIN_LENGTH + " to "
                            + Schemas.CodeVerifier.MAX_LENGTH + ", not " + length);
        }
        byte[] random = new byte[(length * 3 + 3) / 4];
        RANDOM.nextBytes(random);
        String verifier =
                Base64.getUrlEncoder().withoutPadding().encodeToString(random).substring(0, length);
        return new PkcePair(verifier, challenge(verifier));
    }

    /**
     * The S256 challenge of a verifier: {@code BASE64URL(SHA256(ASCII(verifier)))}.
     *
     * @throws TokenManagerException {@code INVALID_VERIFIER} (never quoting it) when the verifier is not
     *     43 to 128 characters of {@code A-Z a-z 0-9 - . _ ~}
     * @see <a href="https://www.rfc-editor.org/rfc/rfc7636#section-4.2">RFC 7636 §4.2, Appendix B</a>
     */
    public static String challenge(String verifier) {
        if (verifier == null || !VERIFIER.matcher(verifier).matches()) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_VERIFIER,
                    "a PKCE verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1)");
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(verifier.getBytes(StandardCharsets.US_ASCII));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** The challenge only: the verifier is a secret. */
    @Override
    public String toString() {
        return "PkcePair[verifier=[redacted], challenge=" + challenge + "]";
    }
}
