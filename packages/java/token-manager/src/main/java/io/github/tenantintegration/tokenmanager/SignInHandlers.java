package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.api.Scope;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;

/**
 * The two web handlers of a server's sign-in, "start" and "callback" ({@code spec/token-store/README.md},
 * "Binding a sign-in to its browser" and "Decisions every kit follows"; Go's {@code signinhttp}), as
 * plain functions of a {@link Request} returning a {@link Response}: no servlet, Spring or other
 * dependency, so that a Spring MVC controller, a servlet, a JDK {@code HttpServer} handler or any
 * framework adapts them in a few lines (copy the method, path, query, {@code Cookie} headers and the
 * logged-in user in; copy the status, headers and body out).
 *
 * <ul>
 *   <li>{@link #start}: GET or POST ({@code 405} otherwise) for the logged-in user ({@code 401} when
 *       none): sets the binding cookie ({@code __Host-tenant-signin} on https, {@code tenant-signin}
 *       on http; {@code HttpOnly}, {@code SameSite=Lax}, {@code Path=/}, {@code Max-Age} the pending
 *       lifetime) at every start, reusing a valid one so two tabs share it, and answers {@code 303} to
 *       the tenant's authorize URL;
 *   <li>{@link #callback}: GET ({@code 405}) at the redirect URI's path only ({@code 404}): the
 *       callback URL is the configured redirect URI plus the request's query (never rebuilt from
 *       {@code Host} or {@code X-Forwarded-*}), the sign-in must have been begun in this browser and,
 *       unless {@link Builder#anySession}, for the logged-in user; then {@code 303} to the page after
 *       sign-in (default {@code /}).
 * </ul>
 *
 * <p>Every answer has {@code Cache-Control: no-store}; the callback's also {@code Referrer-Policy:
 * no-referrer}. Errors: {@code 401} nobody logged in, {@code 503} for {@code STORAGE_FAILED}, {@code
 * LOCK_TIMEOUT} and {@code TRANSIENT} (the request may work later), {@code 400} for any other refusal:
 * a short text holding no token, code, state or binding, after {@link Builder#onError}.
 *
 * <pre>{@code
 * // Spring MVC
 * @GetMapping("/tenant/connect")
 * ResponseEntity<String> connect(HttpServletRequest http, @AuthenticationPrincipal User user) {
 *     return SignInHandlers.toEntity(handlers.start(SignInHandlers.Request.of(http.getMethod(),
 *             http.getRequestURI(), http.getQueryString(), Collections.list(http.getHeaders("Cookie")),
 *             user == null ? null : user.getId())));
 * }
 * }</pre>
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc9700#section-4.7.1">RFC 9700 §4.7.1</a>, RFC 6749 §10.12
 */
public final class SignInHandlers {
    /** The cookie of the binding when the redirect URI is https. */
    public static final String COOKIE_NAME = "__Host-tenant-signin";
    /** The cookie of the binding when the redirect URI is http (loopback development). */
    public static final String COOKIE_NAME_ON_HTTP = "tenant-signin";

    private static final Pattern COOKIE_VALUE = Pattern.compile("[A-Za-z0-9_-]{43}");

    /**
     * What a handler needs of a request.
     *
     * @param method the HTTP method
     * @param path the request's path, as sent (not decoded)
     * @param rawQuery the query as sent, without {@code ?} (null: none)
     * @param cookieHeaders every {@code Cookie} header of the request
     * @param sessionId the session id of the logged-in user (the app's own login: its cookie, its server
     *     session; never a value of the query or of a form), null when nobody is logged in
     * @param ownBinding the app's own browser binding instead of the cookie (its server session's id: a
     *     value only this browser's requests carry), null to use the cookie
     */
    public record Request(
            String method,
            String path,
            String rawQuery,
            List<String> cookieHeaders,
            String sessionId,
            String ownBinding) {
        public Request {
            cookieHeaders = cookieHeaders == null ? List.of() : List.copyOf(cookieHeaders);
        }

        /** A request without an own binding. */
        public static Request of(
                String method, String path, String rawQuery, List<String> cookieHeaders, String sessionId) {
            return new Request(method, path, rawQuery, cookieHeaders, sessionId, null);
        }

        /** Never the query (it holds the code and state) nor the cookies. */
        @Override
        public String toString() {
            return "Request[" + method + " " + path + ", sessionId=" + sessionId + "]";
        }
    }

    /**
     * What to answer: the status, the headers (in order; {@code Set-Cookie} at most once) and a short
     * plain-text body (empty on a redirect).
     */
    public record Response(int status, Map<String, String> headers, String body) {
        public Response {
            headers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        }

        /** The value of header {@code name}, or null. */
        public String header(String name) {
            return headers.get(name);
        }

        /** Never the cookie (it holds the binding) nor the location (it holds the state). */
        @Override
        public String toString() {
            return "Response[" + status + ", " + headers.keySet() + "]";
        }
    }

    private final Sessions sessions;
    private final List<Scope> scopes;
    private final String afterSignIn;
    private final boolean anySession;
    private final BiConsumer<Request, RuntimeException> onError;
    private final String callbackBase; // the redirect URI without its query
    private final String callbackPath;
    private final String cookieName;
    private final boolean secure;
    private final long maxAge;

    private SignInHandlers(Builder b) {
        sessions = b.sessions;
        scopes = b.scopes;
        afterSignIn = b.afterSignIn;
        anySession = b.anySession;
        onError = b.onError;
        URI redirect;
        try {
            redirect = new URI(sessions.redirectUri());
        } catch (URISyntaxException e) {
            throw TokenManager.invalid("redirectUri", "not a URI");
        }
        secure = "https".equalsIgnoreCase(redirect.getScheme());
        cookieName = secure ? COOKIE_NAME : COOKIE_NAME_ON_HTTP;
        callbackPath = redirect.getRawPath() == null || redirect.getRawPath().isEmpty() ? "/" : redirect.getRawPath();
        String text = sessions.redirectUri();
        int query = text.indexOf('?');
        callbackBase = query < 0 ? text : text.substring(0, query);
        maxAge = maxAgeOf(sessions.pendingLifetime().toMillis());
    }

    /** The handlers of {@code sessions}. */
    public static Builder builder(Sessions sessions) {
        if (sessions == null) throw TokenManager.invalid("sessions", "give the Sessions the tokens are stored in");
        return new Builder(sessions, List.of(), "/", false, (r, e) -> {});
    }

    /** The cookie's {@code Max-Age} for a pending lifetime: its seconds, rounded up. */
    static long maxAgeOf(long lifetimeMs) {
        return (lifetimeMs + 999) / 1000;
    }

    /** Whether a cookie value has the form of a binding this kit makes (43 base64url characters). */
    static boolean bindingCookie(String value) {
        return value != null && COOKIE_VALUE.matcher(value).matches();
    }

    /** The {@code Set-Cookie} value of the binding cookie. */
    String setCookie(String binding) {
        return cookieName + "=" + binding + "; Path=/; Max-Age=" + maxAge + "; HttpOnly" + (secure ? "; Secure" : "")
                + "; SameSite=Lax";
    }

    /** Begins a sign-in for the logged-in user, bound to this browser: 303 to the authorize URL. */
    public Response start(Request request) {
        Map<String, String> headers = noStore();
        if (!"GET".equals(request.method()) && !"POST".equals(request.method())) {
            headers.put("Allow", "GET, POST");
            return new Response(405, headers, "method not allowed");
        }
        if (request.sessionId() == null) return fail(request, headers, 401, "log in first", null);
        boolean own = request.ownBinding() != null;
        String binding = own ? request.ownBinding() : cookie(request);
        Sessions.Started started;
        try {
            started = sessions.beginSignIn(request.sessionId(), binding, scopes);
        } catch (TokenManagerException e) {
            return fail(request, headers, statusOf(e), "the sign-in could not be started", e);
        }
        if (!own) headers.put("Set-Cookie", setCookie(started.binding()));
        headers.put("Location", started.request().url().toString());
        return new Response(303, headers, "");
    }

    /** Completes a sign-in: the browser and the logged-in user checked before any exchange; 303 after. */
    public Response callback(Request request) {
        Map<String, String> headers = noStore();
        headers.put("Referrer-Policy", "no-referrer");
        if (!"GET".equals(request.method())) {
            headers.put("Allow", "GET");
            return new Response(405, headers, "method not allowed");
        }
        if (!callbackPath.equals(request.path())) {
            return fail(request, headers, 404, "not the callback's path", null);
        }
        String binding = request.ownBinding() != null ? request.ownBinding() : cookie(request);
        if (!anySession && request.sessionId() == null) {
            return fail(request, headers, 401, "log in first, then connect again", null);
        }
        String url = callbackBase + "?" + (request.rawQuery() == null ? "" : request.rawQuery());
        try {
            sessions.completeSignIn(new Sessions.Callback(url, binding, anySession ? null : request.sessionId()));
        } catch (TokenManagerException e) {
            return fail(request, headers, statusOf(e), "the sign-in could not be completed", e);
        }
        headers.put("Location", afterSignIn);
        return new Response(303, headers, "");
    }

    /** The request's binding cookie when it has the form of one (null otherwise: a new one is made). */
    private String cookie(Request request) {
        for (String header : request.cookieHeaders()) {
            for (String pair : header.split(";")) {
                int eq = pair.indexOf('=');
                if (eq < 0) continue;
                if (pair.substring(0, eq).trim().equals(cookieName)) {
                    String value = pair.substring(eq + 1).trim();
                    if (bindingCookie(value)) return value;
                }
            }
        }
        return null;
    }

    private static Map<String, String> noStore() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Cache-Control", "no-store");
        return headers;
    }

    /** Calls onError, then answers {@code status} with what failed and, for the kit's errors, why in words. */
    private Response fail(
            Request request, Map<String, String> headers, int status, String what, TokenManagerException e) {
        if (e != null) {
            try {
                onError.accept(request, e);
            } catch (RuntimeException ignored) {
                // The answer is sent all the same.
            }
        }
        headers.put("Content-Type", "text/plain; charset=utf-8");
        return new Response(status, headers, e == null ? what : what + ": " + reason(e));
    }

    /** A short sentence for the browser, from the error's code (messages hold no token, code or state). */
    static String reason(TokenManagerException e) {
        return switch (e.code()) {
            case STATE_MISMATCH -> e.reason() + "; start it again";
            case NO_PENDING_SIGN_IN -> "it was already used, or has expired; start it again";
            case STATE_EXPIRED -> "it expired; start it again";
            case AUTHORIZATION_DENIED ->
                "access was not granted (" + (e instanceof OAuthException oauth ? oauth.error() : "denied") + ")";
            case INVALID_SESSION_ID -> "the user's id cannot name a session";
            case STORAGE_FAILED, LOCK_TIMEOUT, TRANSIENT -> "try again in a moment";
            default -> e.reason();
        };
    }

    /** 503 when the storage or the tenant failed (the request may work later), 400 otherwise. */
    static int statusOf(TokenManagerException e) {
        return switch (e.code()) {
            case STORAGE_FAILED, LOCK_TIMEOUT, TRANSIENT -> 503;
            default -> 400;
        };
    }

    /** The options of {@link SignInHandlers}. Immutable: each method returns a new builder. */
    public static final class Builder {
        private final Sessions sessions;
        private final List<Scope> scopes;
        private final String afterSignIn;
        private final boolean anySession;
        private final BiConsumer<Request, RuntimeException> onError;

        private Builder(
                Sessions sessions,
                List<Scope> scopes,
                String afterSignIn,
                boolean anySession,
                BiConsumer<Request, RuntimeException> onError) {
            this.sessions = sessions;
            this.scopes = scopes;
            this.afterSignIn = afterSignIn;
            this.anySession = anySession;
            this.onError = onError;
        }

        /** The scopes asked for (default the managers' builder's). */
        public Builder scopes(List<Scope> scopes) {
            return new Builder(sessions, List.copyOf(Objects.requireNonNull(scopes)), afterSignIn, anySession, onError);
        }

        /** Where the callback sends the browser once signed in, with 303 (default {@code /}). */
        public Builder afterSignIn(String location) {
            if (location == null || location.isEmpty()) throw TokenManager.invalid("afterSignIn", "give a location");
            return new Builder(sessions, scopes, location, anySession, onError);
        }

        /**
         * Lets the callback complete a sign-in begun for any session, without the logged-in user: for an
         * app whose login cookie does not reach the callback ({@code SameSite=Strict}). By default the
         * sign-in must have been begun for the user logged in on this browser now.
         */
        public Builder anySession(boolean any) {
            return new Builder(sessions, scopes, afterSignIn, any, onError);
        }

        /** Called with every error of the handlers, before the answer (for logs: it holds no secret). */
        public Builder onError(BiConsumer<Request, RuntimeException> listener) {
            return new Builder(sessions, scopes, afterSignIn, anySession, Objects.requireNonNull(listener));
        }

        /** The handlers. */
        public SignInHandlers build() {
            return new SignInHandlers(this);
        }
    }
}
