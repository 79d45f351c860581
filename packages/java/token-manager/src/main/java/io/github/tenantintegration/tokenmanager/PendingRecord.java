package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.internal.Json;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The one pending sign-in ({@code spec/token-store/pending-record.schema.json}): the state, the PKCE
 * verifier and when it expires. Both are secrets: {@link #toString()} shows neither.
 */
record PendingRecord(String state, String verifier, long expiresAt) {
    static Optional<PendingRecord> parse(String raw) {
        Optional<Map<String, Object>> members = Json.parseObject(raw);
        if (members.isEmpty()) return Optional.empty();
        Map<String, Object> m = members.get();
        if (m.get("state") instanceof String state
                && m.get("verifier") instanceof String verifier
                && m.get("expiresAt") instanceof Number expiresAt) {
            return Optional.of(new PendingRecord(state, verifier, expiresAt.longValue()));
        }
        return Optional.empty();
    }

    String serialize() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("state", state);
        out.put("verifier", verifier);
        out.put("expiresAt", expiresAt);
        return Json.write(out);
    }

    @Override
    public String toString() {
        return "PendingRecord[state=[redacted], verifier=[redacted], expiresAt=" + expiresAt + "]";
    }
}
