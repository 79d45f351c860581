package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.internal.Json;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A pending sign-in ({@code spec/token-store/pending-record.schema.json}): the state, the PKCE
 * verifier, when it expires, and for a server the session the tokens will be stored under and the
 * SHA-256 of the browser binding (null when there are none). The state and verifier are secrets:
 * {@link #toString()} shows neither.
 */
record PendingRecord(String state, String verifier, long expiresAt, String sessionId, String browser) {
    private static final Pattern STATE = Pattern.compile("[A-Za-z0-9_-]{43}");
    private static final Pattern VERIFIER = Pattern.compile("[A-Za-z0-9._~-]{43,128}");
    private static final Pattern BROWSER = Pattern.compile("[0-9a-f]{64}");

    /** The record of {@code raw}, or empty when it does not validate (it then reads as absent). */
    static Optional<PendingRecord> parse(String raw) {
        Optional<Map<String, Object>> members = Json.parseObject(raw);
        if (members.isEmpty()) return Optional.empty();
        Map<String, Object> m = members.get();
        for (String name : m.keySet()) {
            if (!Set.of("state", "verifier", "expiresAt", "sessionId", "browser")
                    .contains(name)) return Optional.empty();
        }
        Object session = m.get("sessionId");
        Object browser = m.get("browser");
        if (m.get("state") instanceof String state
                && STATE.matcher(state).matches()
                && m.get("verifier") instanceof String verifier
                && VERIFIER.matcher(verifier).matches()
                && m.get("expiresAt") instanceof Number expiresAt
                && integral(expiresAt)
                && (session == null || session instanceof String s && SessionId.isValid(s))
                && (browser == null
                        || browser instanceof String b && BROWSER.matcher(b).matches())) {
            return Optional.of(
                    new PendingRecord(state, verifier, expiresAt.longValue(), (String) session, (String) browser));
        }
        return Optional.empty();
    }

    private static boolean integral(Number n) {
        double d = n.doubleValue();
        return d >= 0 && d == Math.rint(d);
    }

    /** The JSON text every kit writes: state, verifier, expiresAt, then sessionId and browser when set. */
    String serialize() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("state", state);
        out.put("verifier", verifier);
        out.put("expiresAt", expiresAt);
        if (sessionId != null) out.put("sessionId", sessionId);
        if (browser != null) out.put("browser", browser);
        return Json.write(out);
    }

    @Override
    public String toString() {
        return "PendingRecord[state=[redacted], verifier=[redacted], expiresAt=" + expiresAt + ", sessionId="
                + sessionId + ", browser=" + (browser == null ? null : "[hash]") + "]";
    }
}
