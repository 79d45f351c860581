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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/** The sign-in: the authorize URL, and the callback checked and exchanged (RFC 6749 §4.1; RFC 7636). */
final class SignIn {
    /** The verifier's length: 64 characters, 384 random bits (RFC 7636 §4.1 allows 43 to 128). */
    static final int VERIFIER_LENGTH = 64;

    private SignIn() {}

    /**
     * Stores a pending sign-in by its state (for {@code sessionId}, bound to the browser whose binding
     * hashes to {@code browser}; both may be null) and returns the authorize URL.
     */
    static AuthorizationRequest begin(TokenManager m, List<Scope> scopes, String sessionId, String browser) {
        PkcePair pair = PkcePair.generate(VERIFIER_LENGTH);
        String state = States.random();
        long expiresAt = Math.round(m.nowMs()) + m.pendingLifetime.toMillis();
        try {
            m.pending.put(new PendingRecord(state, pair.verifier(), expiresAt, sessionId, browser), m.pendingLifetime);
        } catch (RuntimeException e) {
            throw Session.storageFailed(m, e, state, pair.verifier());
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

    /** A manager's callback: its pending sign-in must be of its own scope (the same session id, or none). */
    static SessionInfo complete(TokenManager m, String callbackUrl) {
        Checked checked = takeCallback(m, callbackUrl, null, p -> Objects.equals(p.sessionId(), m.sessionId));
        return exchange(m, checked);
    }

    /** A callback checked: its code and its pending sign-in. Both secrets: printed by neither. */
    record Checked(String code, PendingRecord pending) {
        @Override
        public String toString() {
            return "Checked[code=[redacted], pending=" + pending + "]";
        }
    }

    /**
     * The callback's checks ({@code spec/token-store/README.md}, "The callback", steps 1 to 9): the
     * pending sign-in is taken once the state is read, before any other check, so it is used once
     * whatever follows. {@code binding} is what the callback's request brought (null: none); {@code
     * ours} says whether the record's session is the caller's.
     */
    static Checked takeCallback(TokenManager m, String callbackUrl, String binding, Predicate<PendingRecord> ours) {
        URI uri = callbackUri(callbackUrl);
        Map<String, List<String>> params = query(uri);
        List<String> states = params.getOrDefault("state", List.of());
        if (states.isEmpty() || states.get(0).isEmpty())
            throw new TokenManagerException(ErrorCode.STATE_MISSING, "the callback has no state");
        if (states.size() > 1)
            throw new TokenManagerException(ErrorCode.INVALID_CALLBACK, "the callback repeats state");
        String state = states.get(0);
        String code = first(params, "code");
        Optional<PendingRecord> taken;
        try {
            taken = m.pending.take(state);
        } catch (RuntimeException e) {
            throw Session.storageFailed(m, e, state, code == null ? "" : code);
        }
        if (!Origins.normalTarget(uri, true).equals(m.redirectTarget)) {
            throw new TokenManagerException(ErrorCode.INVALID_CALLBACK, "the callback is not at the redirect URI");
        }
        for (String name : List.of("code", "error")) {
            if (params.getOrDefault(name, List.of()).size() > 1)
                throw new TokenManagerException(ErrorCode.INVALID_CALLBACK, "the callback repeats " + name);
        }
        PendingRecord pending = taken.orElseThrow(() -> new TokenManagerException(
                ErrorCode.NO_PENDING_SIGN_IN,
                "no sign-in is pending for the callback's state (never begun with this storage, already used, or"
                        + " expired)"));
        checkPending(m, pending, state, binding, ours);
        Map<String, String> single = new HashMap<>();
        params.forEach((name, values) -> single.put(name, values.get(0)));
        denied(pending, single);
        if (code == null || code.isEmpty())
            throw new TokenManagerException(ErrorCode.INVALID_CALLBACK, "the callback has no code");
        return new Checked(code, pending);
    }

    /** Steps 5 to 8: the state (constant time: it guards the 128-bit key), the browser, the session, the expiry. */
    private static void checkPending(
            TokenManager m, PendingRecord pending, String state, String binding, Predicate<PendingRecord> ours) {
        if (!States.equal(state, pending.state())) {
            throw new TokenManagerException(
                    ErrorCode.STATE_MISMATCH, "the callback's state is not the one of the pending sign-in");
        }
        Binding.check(pending.browser(), binding);
        if (!ours.test(pending)) {
            throw new TokenManagerException(ErrorCode.STATE_MISMATCH, "the sign-in was started for another session");
        }
        if (m.nowMs() > pending.expiresAt()) {
            throw new TokenManagerException(ErrorCode.STATE_EXPIRED, "the pending sign-in expired; begin it again");
        }
    }

    /** Step 9: {@code error} in the callback is {@code AUTHORIZATION_DENIED}, no request sent. */
    private static void denied(PendingRecord pending, Map<String, String> params) {
        Optional<TokenHttp.OAuthFields> denied = TokenHttp.OAuthFields.of(params);
        if (denied.isEmpty()) return;
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

    /** Step 10: the code exchanged (JSON, with the verifier), the tokens stored under {@code m}'s scope. */
    static SessionInfo exchange(TokenManager m, Checked checked) {
        m.mu.lock();
        try {
            m.generation++;
        } finally {
            m.mu.unlock();
        }
        PendingRecord pending = checked.pending();
        String body = new AuthorizationCodeGrantRequest(m.clientId, m.redirectUri, checked.code(), pending.verifier())
                .toJson();
        TokenRecord record = TokenHttp.requestTokens(m, body, List.of(checked.code(), pending.verifier()), null, 1);
        SessionInfo info = Session.commit(m, record);
        m.log(System.Logger.Level.DEBUG, "signed in", "expires_at", info.expiresAt());
        m.emit(new Event(Event.Kind.SIGNED_IN, info, false, null));
        return info;
    }

    private static String first(Map<String, List<String>> params, String name) {
        List<String> values = params.get(name);
        return values == null ? null : values.get(0);
    }

    /** Step 1: a full URL, or {@code INVALID_CALLBACK}; nothing is taken. */
    private static URI callbackUri(String callbackUrl) {
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
        return uri;
    }

    /** The query's parameters, each with every value in order. Its values never enter a message. */
    private static Map<String, List<String>> query(URI uri) {
        Map<String, List<String>> params = new HashMap<>();
        String query = uri.getRawQuery();
        if (query == null) return params;
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) continue;
            int eq = pair.indexOf('=');
            try {
                String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                params.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
            } catch (IllegalArgumentException e) {
                throw new TokenManagerException(ErrorCode.INVALID_CALLBACK, "the callback's query cannot be read");
            }
        }
        return params;
    }
}
