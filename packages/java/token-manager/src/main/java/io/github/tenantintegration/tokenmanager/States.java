package io.github.tenantintegration.tokenmanager;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;

/** Random ids and their comparison: states, record ids, intent holders (RFC 6749 §10.12). */
final class States {
    private static final SecureRandom RANDOM = new SecureRandom();

    private States() {}

    /** 256 random bits from the CSPRNG, base64url: 43 characters. */
    static String random() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** Compares in time that does not depend on where the two differ. */
    static boolean equal(String received, String stored) {
        return MessageDigest.isEqual(
                received.getBytes(StandardCharsets.UTF_8), stored.getBytes(StandardCharsets.UTF_8));
    }

    /** 32 lowercase hex digits (a lock owner's id). */
    static String hex128() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return java.util.HexFormat.of().formatHex(bytes);
    }
}
