package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.internal.Json;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One stored token record ({@code spec/token-store/token-record.schema.json}), written byte for byte
 * as the TypeScript manager's {@code JSON.stringify} writes it (same members, same order, no
 * spaces), so that Java, TypeScript, Python and Go processes share it. Never printed: its
 * {@link #toString()} holds no token.
 */
final class TokenRecord {
    /** RFC 6749 Appendix A.12/A.13: tokens are 1*VSCHAR (%x20-7E). */
    static final Pattern VSCHAR = Pattern.compile("^[\\x20-\\x7e]+$");

    /** The form of a record's id and session: 256 bits, base64url. */
    static final Pattern RECORD_ID = Pattern.compile("^[A-Za-z0-9_-]{43}$");

    final String accessToken;
    final String refreshToken;
    final String tokenType;
    final double expiresIn;
    final String scope;
    final double receivedAt;
    final String id;
    final String session;
    final long seq;

    TokenRecord(
            String accessToken,
            String refreshToken,
            String tokenType,
            double expiresIn,
            String scope,
            double receivedAt,
            String id,
            String session,
            long seq) {
        this.accessToken = accessToken;
        this.refreshToken = refreshToken;
        this.tokenType = tokenType;
        this.expiresIn = expiresIn;
        this.scope = scope;
        this.receivedAt = receivedAt;
        this.id = id;
        this.session = session;
        this.seq = seq;
    }

    /** The five fields of a token response, checked (RFC 6749 §5.1, §6); the rest to be stamped. */
    record Fields(String accessToken, String refreshToken, String tokenType, double expiresIn, String scope) {
        @Override
        public String toString() {
            return "Fields[tokenType=" + tokenType + ", expiresIn=" + expiresIn + ", scope=" + scope + "]";
        }
    }

    /**
     * Validates a token response (or a stored record) and returns its five fields. {@code previous}
     * is kept when a refresh response has no {@code refresh_token} (it did not rotate); a member
     * present with any value replaces it and must be valid.
     *
     * @throws TokenManagerException {@code INVALID_RESPONSE} naming the field, never its value
     */
    static Fields fields(Map<String, Object> members, String previous) {
        if (!(members.get("access_token") instanceof String access)
                || !VSCHAR.matcher(access).matches()) {
            throw invalid("access_token");
        }
        String refresh = previous;
        if (members.containsKey("refresh_token") || previous == null) {
            if (!(members.get("refresh_token") instanceof String given)
                    || !VSCHAR.matcher(given).matches()) {
                throw invalid("refresh_token");
            }
            refresh = given;
        }
        if (!(members.get("token_type") instanceof String type) || !type.equalsIgnoreCase("bearer")) {
            throw invalid("token_type");
        }
        if (!(members.get("expires_in") instanceof Number lifetime) || !(lifetime.doubleValue() > 0)) {
            throw invalid("expires_in");
        }
        String scope = null;
        if (members.containsKey("scope")) {
            if (!(members.get("scope") instanceof String granted)) throw invalid("scope");
            scope = granted;
        }
        return new Fields(access, refresh, type, lifetime.doubleValue(), scope);
    }

    private static TokenManagerException invalid(String field) {
        return new TokenManagerException(
                ErrorCode.INVALID_RESPONSE, "the token response's " + field + " is missing or invalid");
    }

    /**
     * The stored record, or empty when the value does not validate (no session): every field the
     * schema requires must be there, {@code id}, {@code session} and {@code seq} included.
     */
    static Optional<TokenRecord> parse(String raw) {
        Optional<Map<String, Object>> members = Json.parseObject(raw);
        if (members.isEmpty()) return Optional.empty();
        Map<String, Object> m = members.get();
        Fields fields;
        try {
            fields = fields(m, null);
        } catch (TokenManagerException e) {
            return Optional.empty();
        }
        if (!(m.get("received_at") instanceof Long receivedAt) || receivedAt < 0) return Optional.empty();
        if (!(m.get("id") instanceof String id) || !RECORD_ID.matcher(id).matches()) return Optional.empty();
        if (!(m.get("session") instanceof String session)
                || !RECORD_ID.matcher(session).matches()) return Optional.empty();
        if (!(m.get("seq") instanceof Long seq) || seq < 0) return Optional.empty();
        return Optional.of(new TokenRecord(
                fields.accessToken(),
                fields.refreshToken(),
                fields.tokenType(),
                fields.expiresIn(),
                fields.scope(),
                receivedAt,
                id,
                session,
                seq));
    }

    /** The record's JSON text, as the other kits write it. */
    String serialize() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("access_token", accessToken);
        out.put("refresh_token", refreshToken);
        out.put("token_type", tokenType);
        out.put("expires_in", expiresIn);
        out.put("scope", scope);
        out.put("received_at", (long) receivedAt);
        out.put("id", id);
        out.put("session", session);
        out.put("seq", seq);
        return Json.write(out);
    }

    /** The receive time bounded by the reader's clock: a record stamped in this machine's future counts as received now. */
    double receivedAt(double nowMs) {
        return Math.min(receivedAt, nowMs);
    }

    /** When the access token expires: the local receive time plus {@code expires_in} seconds (RFC 6749 §5.1). */
    double expiresAtMs(double nowMs) {
        return receivedAt(nowMs) + expiresIn * 1000;
    }

    /**
     * Younger than its lifetime minus the leeway (at most half the lifetime). A record stamped
     * further ahead than the token lives is a wrong clock: not fresh.
     */
    boolean fresh(double nowMs, double leewayMs) {
        double lifetime = expiresIn * 1000;
        if (receivedAt - nowMs > lifetime) return false;
        return nowMs - receivedAt(nowMs) < lifetime - Math.min(leewayMs, lifetime / 2);
    }

    /**
     * Whether {@code stored} supersedes {@code ours}, whose write failed: it is ours, or a later record
     * of the same session, or (another session) ours is a refresh or stored is not older.
     */
    static boolean supersedes(TokenRecord stored, TokenRecord ours) {
        if (stored.id.equals(ours.id)) return true;
        if (stored.session.equals(ours.session)) return stored.seq >= ours.seq;
        return ours.seq > 0 || stored.receivedAt >= ours.receivedAt;
    }

    /** The lowercase hex SHA-256 of a refresh token: names it without revealing it. */
    static String fingerprint(String refreshToken) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(refreshToken.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** Names the record, never a token. */
    @Override
    public String toString() {
        return "TokenRecord[id=" + id + ", session=" + session + ", seq=" + seq
                + ", accessToken=[redacted], refreshToken=[redacted]]";
    }
}
