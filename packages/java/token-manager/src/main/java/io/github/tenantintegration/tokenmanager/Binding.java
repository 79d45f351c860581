package io.github.tenantintegration.tokenmanager;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Binding a sign-in to the browser that began it ({@code spec/token-store/README.md}, "Binding a
 * sign-in to its browser"; login CSRF, RFC 9700 §4.7.1, RFC 6749 §10.12; Go's {@code binding.go}): a
 * server's pending sign-ins live in one storage for every browser, so the state alone does not say
 * which browser began one. The start gives the browser a binding (a cookie, or the app's own value),
 * the pending record keeps its SHA-256, and the callback must bring the binding with that hash.
 */
public final class Binding {
    private Binding() {}

    /**
     * A new browser binding: 32 random bytes from the CSPRNG in base64url without padding (43
     * characters), the value of the sign-in cookie.
     */
    public static String random() {
        return States.random();
    }

    /**
     * What a pending record keeps of a binding: the SHA-256 of its UTF-8 bytes, 64 lowercase hex
     * digits. The binding itself is never stored, logged or put in a URL.
     */
    public static String hash(String binding) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(sha.digest(binding.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is in every JDK", e);
        }
    }

    /**
     * The refusal rule at the callback (step 6): {@code STATE_MISMATCH} when the record has a browser
     * and the callback brings no binding (an empty one counts as none) or one of another hash (compared
     * in constant time); and when the callback brings a binding but the record has none (a server
     * binds every sign-in it begins). Neither: not checked (a sign-in kept in one process).
     */
    static void check(String browser, String binding) {
        boolean none = binding == null || binding.isEmpty();
        if (browser == null && none) return;
        if (browser == null || none || !States.equal(hash(binding), browser)) {
            throw new TokenManagerException(ErrorCode.STATE_MISMATCH, "the sign-in was started in another browser");
        }
    }
}
