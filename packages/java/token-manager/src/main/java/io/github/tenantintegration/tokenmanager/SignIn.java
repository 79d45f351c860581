package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.api.AuthorizationCodeGrantRequest;
import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.internal.Redact;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** The sign-in: the authorize URL, and the callback checked and exchanged (RFC 6749 §4.1; RFC 7636). */
final class SignIn {
    /** The verifier's length: 64 characters, 384 random bits (RFC 7636 §4.1 allows 43 to 128). */
    static final int VERIFIER_LENGTH = 64;

    private SignIn() {}

    static AuthorizationRequest begin(TokenManager m, List<Scope> scopes) {
        PkcePair pair = PkcePair.generate(VERIFIER_LENGTH);
        String state = States.random();
        long expiresAt = Math.round(m.nowMs()) + m.pendingLifetime.toMillis();
        try {
            m.pendingStorage.set(m.pendingKey, new PendingRecord(state, pair.verifier(), expiresAt).serialize());
        } catch (RuntimeException e) {
            throw Sessions.storageFailed(m, e, state, pair.verifier());
        }
        String names = scopes.stream().map(Scope::value).collect(Collectors.joining(" "));
        String query = String.join(
                "&",
                "response_type=code",
                "client_id=" + escape(m.clientId),
                "redirect_uri=" + escape(m.redirectUri),
                "scope=" + escape(names),
                "state=" + escape(state),
                "code_challenge=" + escape(pair.challenge()),
                "code_challenge_method=S256");
        return new AuthorizationRequest(
                URI.create(m.origin + "/oauth/authorize?" + query),
                Instant.ofEpochMilli(expiresAt),
                scopes,
                m.redirectUri);
    }

    /** Percent-encodes a query value, with %20 for spaces (a "+" is read literally by some servers). */
    static String escape(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static SessionInfo complete(TokenManager m, String callbackUrl) {
        Map<String, String> params = callbackParams(m, callbackUrl);
        PendingRecord pending = takePending(m);
        String received = params.get("state");
        if (received == null) throw new TokenManagerException(ErrorCode.STATE_MISSING, "the callback has no state");
        if (!States.equal(received, pending.state())) {
            throw new TokenManagerException(
                    ErrorCode.STATE_MISMATCH, "the callback's state is not the one of the pending sign-in");
        }
        if (m.nowMs() > pending.expiresAt()) {
            throw new TokenManagerException(ErrorCode.STATE_EXPIRED, "the pending sign-in expired; begin it again");
        }
        Optional<TokenHttp.OAuthFields> denied = TokenHttp.OAuthFields.of(params);
        if (denied.isPresent()) {
            List<String> secrets = List.of(pending.state(), pending.verifier(), params.getOrDefault("code", ""));
            String description = Redact.text(denied.get().description(), secrets);
            String error = Redact.text(denied.get().error(), secrets);
            String message = "the tenant answered " + error
                    + (description == null || description.isEmpty() ? "" : " (" + description + ")");
            throw new OAuthException(
                    ErrorCode.AUTHORIZATION_DENIED,
                    message,
                    0,
                    error,
                    description,
                    denied.get().uri());
        }
        String code = params.get("code");
        if (code == null || code.isEmpty())
            throw new TokenManagerException(ErrorCode.INVALID_CALLBACK, "the callback has no code");
        m.mu.lock();
        try {
            m.generation++;
        } finally {
            m.mu.unlock();
        }
        String body = new AuthorizationCodeGrantRequest(m.clientId, m.redirectUri, code, pending.verifier()).toJson();
        TokenRecord record = TokenHttp.requestTokens(m, body, List.of(code, pending.verifier()), null, 1);
        SessionInfo info = Sessions.commit(m, record);
        m.log(System.Logger.Level.DEBUG, "signed in", "expires_at", info.expiresAt());
        m.emit(new Event(Event.Kind.SIGNED_IN, info, false, null));
        return info;
    }

    private static PendingRecord takePending(TokenManager m) {
        Optional<String> raw;
        try {
            raw = m.pendingStorage.get(m.pendingKey);
            if (raw.isPresent()) m.pendingStorage.delete(m.pendingKey);
        } catch (RuntimeException e) {
            throw Sessions.storageFailed(m, e);
        }
        return raw.flatMap(PendingRecord::parse)
                .orElseThrow(() -> new TokenManagerException(
                        ErrorCode.NO_PENDING_SIGN_IN, "no sign-in is pending (never begun, already used, or cleared)"));
    }

    /**
     * The callback's query, checked: a full URL at the redirect URI that repeats none of state, code,
     * error. Its value never enters a message.
     */
    static Map<String, String> callbackParams(TokenManager m, String callbackUrl) {
        URI uri;
        try {
            uri = new URI(callbackUrl);
        } catch (URISyntaxException | NullPointerException e) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_CALLBACK, "not a full URL: pass the whole URL the browser was sent back to");
        }
        if (!uri.isAbsolute() || uri.getHost() == null) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_CALLBACK, "not a full URL: pass the whole URL the browser was sent back to");
        }
        if (!Origins.normalTarget(uri, true).equals(m.redirectTarget)) {
            throw new TokenManagerException(ErrorCode.INVALID_CALLBACK, "the callback is not at the redirect URI");
        }
        Map<String, String> params = new HashMap<>();
        String query = uri.getRawQuery();
        if (query == null) return params;
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) continue;
            int eq = pair.indexOf('=');
            String name;
            String value;
            try {
                name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new TokenManagerException(ErrorCode.INVALID_CALLBACK, "the callback's query cannot be read");
            }
            if (params.containsKey(name) && (name.equals("state") || name.equals("code") || name.equals("error"))) {
                throw new TokenManagerException(ErrorCode.INVALID_CALLBACK, "the callback repeats " + name);
            }
            params.putIfAbsent(name, value);
        }
        return params;
    }
}
