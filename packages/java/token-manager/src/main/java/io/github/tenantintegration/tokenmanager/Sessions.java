package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.api.Scope;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The sessions of a server acting for many users ({@code spec/token-store/README.md}, "Sessions",
 * issue 39; the TypeScript kit's {@code createSessions}, Python's {@code Sessions}, Go's {@code
 * Sessions}): one storage, one session per id the app chooses (its user's id, a connection row's id;
 * {@link SessionId}). Every call names the session: nothing here has a default session, so a server
 * cannot hand one user's tokens to another by leaving the id out. Safe for concurrent use.
 *
 * <p>Each session has its own records ({@code tenant-integration:<origin>:<clientId>:<id>:…}; on Redis
 * one hash slot per session), its own refresh lock (so one session's refresh never waits for
 * another's) and single flight, and the promises of a {@link TokenManager}: one refresh per session
 * per expiry across threads, processes and the kits sharing the storage. Managers are made on demand
 * and kept while used: one idle for {@link Builder#maxIdle} (default 5 min), or the least recently used
 * past {@link Builder#maxCached} (default 1 000), is dropped, never while a call of it is under way,
 * a refresh of it is in flight, or it holds tokens it could not write yet. One {@link HttpClient}
 * serves every session's token requests and API calls.
 *
 * <p>A web server begins a sign-in with {@link #beginSignIn} and completes it with {@link
 * #completeSignIn}, binding it to the browser that began it; {@link #httpClient(String)} gives the client of a session.
 *
 * <pre>{@code
 * Sessions sessions = Sessions.builder(TokenManager.builder(tenant, clientId, "https://app.example/callback")
 *                 .scopes(Scope.PROFILE_READ)
 *                 .storage(RedisStorage.of(redis)))
 *         .build();
 * HttpClient client = sessions.httpClient(user.id()); // that user's token, never another's
 * }</pre>
 */
public final class Sessions {
    /** The default of {@link Builder#maxCached}. */
    public static final int DEFAULT_MAX_CACHED = 1000;
    /** The default of {@link Builder#maxIdle}. */
    public static final Duration DEFAULT_MAX_IDLE = Duration.ofMinutes(5);

    private static final ScheduledExecutorService SWEEPER = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "tenant-integration-sessions-sweep");
        thread.setDaemon(true);
        return thread;
    });

    private final TokenManager.Builder managers;
    private final TokenManager signIns; // without a session: the pending sign-ins, the callback's checks
    private final HttpClient http;
    private final int maxCached;
    private final long maxIdleNanos;

    private final ReentrantLock mu = new ReentrantLock();
    /** The cached managers, the least recently used first. */
    private final LinkedHashMap<String, TokenManager> cached = new LinkedHashMap<>(16, 0.75f, true);

    private ScheduledFuture<?> sweep; // armed while a manager is cached

    private Sessions(Builder b) {
        if (b.managers.hasSessionId()) {
            throw TokenManager.invalid(
                    "sessionId", "a Sessions takes the session id on every call (manager, beginSignIn, httpClient…)");
        }
        if (b.maxCached < 1 || b.maxIdle.isNegative() || b.maxIdle.isZero()) {
            throw TokenManager.invalid("maxCached, maxIdle", "keep at least one manager, for a positive time");
        }
        maxCached = b.maxCached;
        maxIdleNanos = b.maxIdle.toNanos();
        TokenManager.Builder shared = b.managers;
        http = shared.httpOrNull() != null ? shared.httpOrNull() : TokenManager.defaultHttpClient();
        shared = shared.httpClient(http);
        if (shared.storageOrNull() == null) shared = shared.storage(new MemoryStorage());
        managers = shared.sharingProcessLock(new ProcessLock());
        signIns = managers.build();
    }

    /**
     * A builder of the sessions of the managers {@code managers} would build: their tenant, client,
     * redirect URI, scopes, storage, lock and every other option, but no session id (every call names
     * its session).
     */
    public static Builder builder(TokenManager.Builder managers) {
        if (managers == null) throw TokenManager.invalid("managers", "must not be null");
        return new Builder(managers, DEFAULT_MAX_CACHED, DEFAULT_MAX_IDLE);
    }

    /**
     * The manager of session {@code sessionId}, made on demand (nothing is read until it is used) and
     * cached. Hold it for the call at hand and ask again for the next: a manager left idle is dropped,
     * and asking costs a map lookup.
     *
     * @throws TokenManagerException {@code INVALID_SESSION_ID}
     */
    public TokenManager manager(String sessionId) {
        SessionId.check(sessionId);
        return cachedManager(sessionId);
    }

    private TokenManager cachedManager(String id) {
        mu.lock();
        try {
            TokenManager m = cached.get(id);
            if (m == null) {
                m = managers.sessionId(id).build();
                cached.put(id, m);
                dropPastMaxCached();
                if (sweep == null) sweep = SWEEPER.schedule(this::dropIdle, maxIdleNanos, TimeUnit.NANOSECONDS);
            }
            m.lastUsed = System.nanoTime();
            return m;
        } finally {
            mu.unlock();
        }
    }

    /** The manager of a valid id, in use until {@link #leave}. */
    private TokenManager enter(String id) {
        mu.lock();
        try {
            TokenManager m = cachedManager(id);
            m.inUse.incrementAndGet();
            return m;
        } finally {
            mu.unlock();
        }
    }

    private static void leave(TokenManager m) {
        m.lastUsed = System.nanoTime();
        m.inUse.decrementAndGet();
    }

    /** No call of {@code m} is under way through this object, no refresh in flight, no unwritten tokens. */
    private static boolean droppable(TokenManager m) {
        if (m.inUse.get() > 0 || m.unsaved != null) return false;
        m.mu.lock();
        try {
            return m.flight == null;
        } finally {
            m.mu.unlock();
        }
    }

    /** Drops the least recently used droppable managers while more than maxCached are cached (mu held). */
    private void dropPastMaxCached() {
        Iterator<Map.Entry<String, TokenManager>> oldest = cached.entrySet().iterator();
        while (cached.size() > maxCached && oldest.hasNext()) {
            TokenManager m = oldest.next().getValue();
            if (droppable(m)) {
                oldest.remove();
                m.log(
                        System.Logger.Level.DEBUG,
                        "the session's manager is dropped from memory (the storage keeps" + " its records)",
                        "why",
                        "least recently used past the cache's bound");
            }
        }
    }

    /**
     * On the sweep timer: drops every droppable manager idle for maxIdle (one holding unwritten tokens
     * writes them on its own retry, and is dropped at a later sweep), and arms the timer again while any
     * is cached.
     */
    private void dropIdle() {
        mu.lock();
        try {
            long now = System.nanoTime();
            long next = maxIdleNanos;
            Iterator<TokenManager> all = cached.values().iterator();
            while (all.hasNext()) {
                TokenManager m = all.next();
                long idle = now - m.lastUsed;
                if (idle < maxIdleNanos) next = Math.min(next, maxIdleNanos - idle);
                else if (!droppable(m)) next = Math.min(next, TimeUnit.SECONDS.toNanos(1));
                else {
                    all.remove();
                    m.log(
                            System.Logger.Level.DEBUG,
                            "the session's manager is dropped from memory (the storage" + " keeps its records)",
                            "why",
                            "idle");
                }
            }
            sweep = cached.isEmpty()
                    ? null
                    : SWEEPER.schedule(
                            this::dropIdle, Math.max(next, TimeUnit.MILLISECONDS.toNanos(10)), TimeUnit.NANOSECONDS);
        } finally {
            mu.unlock();
        }
    }

    /** How many sessions' managers are in memory. */
    public int cached() {
        mu.lock();
        try {
            return cached.size();
        } finally {
            mu.unlock();
        }
    }

    /**
     * The redirect URI, as given: the public callback URL (a callback handler rebuilds the callback
     * URL from it, never from {@code Host} or {@code X-Forwarded-*} headers).
     */
    public String redirectUri() {
        return signIns.redirectUri;
    }

    /** How long a sign-in stays pending. */
    public Duration pendingLifetime() {
        return signIns.pendingLifetime;
    }

    /** The tenant's origin, normalized. */
    public String baseUrl() {
        return signIns.origin;
    }

    /**
     * Whether a request to {@code uri} may carry a session's token: it is on the tenant's origin (the
     * same scheme, host and port), as {@link TokenManager#isForTenant}. For adapters of other HTTP
     * clients, which ask before they resolve whose session a request is for (RFC 6750 §5.3).
     */
    public boolean isForTenant(URI uri) {
        return uri != null
                && uri.getHost() != null
                && Origins.normalTarget(uri, false).equals(signIns.origin);
    }

    /**
     * A sign-in begun for a session: where to send the browser, and the binding that browser must
     * bring to the callback (the value of the sign-in cookie). Neither is printed
     * by {@link #toString()}.
     *
     * @param request the authorize URL and the pending sign-in's expiry
     * @param sessionId the session the tokens will be stored under
     * @param binding the browser binding: the one given to {@link #beginSignIn}, or a new one
     */
    public record Started(AuthorizationRequest request, String sessionId, String binding) {
        @Override
        public String toString() {
            return "Started[sessionId=" + sessionId + ", request=" + request + ", binding=[redacted]]";
        }
    }

    /**
     * Begins a sign-in for session {@code sessionId}, bound to the browser that will bring {@code
     * binding} to the callback: the value of a cookie of that browser, or the app's own value that only
     * that browser's requests carry (its server session's id); null or empty makes a new one ({@link
     * Binding#random()}), returned in {@link Started}. The pending sign-in is stored by its state with
     * the binding's SHA-256, never the binding itself; any number may be pending.
     *
     * @param scopes the scopes to ask for; empty: the builder's
     * @throws TokenManagerException {@code INVALID_SESSION_ID}, {@code STORAGE_FAILED}
     * @see <a href="https://www.rfc-editor.org/rfc/rfc9700#section-4.7.1">RFC 9700 §4.7.1</a>, RFC 6749
     *     §4.1.1, §10.12; RFC 7636 §4.3
     */
    public Started beginSignIn(String sessionId, String binding, Collection<Scope> scopes) {
        SessionId.check(sessionId);
        String given = binding == null || binding.isEmpty() ? Binding.random() : binding;
        List<Scope> asked = scopes == null || scopes.isEmpty() ? signIns.scopes : List.copyOf(scopes);
        AuthorizationRequest request = SignIn.begin(signIns, asked, sessionId, Binding.hash(given));
        return new Started(request, sessionId, given);
    }

    /** {@link #beginSignIn(String, String, Collection)} with the builder's scopes. */
    public Started beginSignIn(String sessionId, String binding) {
        return beginSignIn(sessionId, binding, List.of());
    }

    /**
     * What a server's callback brings to {@link #completeSignIn}.
     *
     * @param url the whole URL the browser was sent back to: the configured redirect URI with the
     *     request's query (never rebuilt from {@code Host} or {@code X-Forwarded-*} headers)
     * @param binding the browser binding the request brought (its cookie, or the app's own value); null
     *     when it brought none
     * @param sessionId when not null, the session the sign-in must have been begun for (the app's user
     *     logged in on this browser now); else {@code STATE_MISMATCH}, before any exchange
     */
    public record Callback(String url, String binding, String sessionId) {
        @Override
        public String toString() {
            return "Callback[url=[redacted], binding=[redacted], sessionId=" + sessionId + "]";
        }
    }

    /** A completed sign-in: whose session, and its expiry and scope. */
    public record SignedIn(String sessionId, SessionInfo info) {}

    /**
     * Completes a sign-in begun with {@link #beginSignIn}: the checks of {@link
     * TokenManager#completeAuthorization}, in the same order, with two more before any exchange
     * ({@code STATE_MISMATCH}): the callback must bring the binding of the browser that began the
     * sign-in, and the sign-in must have been begun for a session (and for {@code callback.sessionId()},
     * when set). The tokens are stored under the sign-in's session.
     *
     * @throws TokenManagerException those of {@link TokenManager#completeAuthorization}, and {@code
     *     INVALID_SESSION_ID} for a bad {@code callback.sessionId()}
     * @see <a href="https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2">RFC 6749 §4.1.2</a>, §10.12; RFC
     *     9700 §4.7.1
     */
    public SignedIn completeSignIn(Callback callback) {
        if (callback == null) throw TokenManager.invalid("callback", "must not be null");
        String expected = callback.sessionId();
        if (expected != null) SessionId.check(expected);
        SignIn.Checked checked = SignIn.takeCallback(
                signIns,
                callback.url(),
                callback.binding(),
                p -> p.sessionId() != null && (expected == null || expected.equals(p.sessionId())));
        TokenManager m = enter(checked.pending().sessionId());
        try {
            return new SignedIn(m.sessionId, SignIn.exchange(m, checked));
        } finally {
            leave(m);
        }
    }

    /**
     * Whether session {@code sessionId} has tokens in the storage (perhaps expired: a refresh may still
     * work).
     *
     * @throws TokenManagerException {@code INVALID_SESSION_ID}, {@code STORAGE_FAILED}
     */
    public boolean isSignedIn(String sessionId) {
        return call(sessionId, m -> m.isSignedIn());
    }

    /**
     * A valid access token of session {@code sessionId} ({@link TokenManager#accessToken()}).
     *
     * @throws TokenManagerException {@code INVALID_SESSION_ID}, and those of {@link
     *     TokenManager#accessToken()}
     */
    public String accessToken(String sessionId) {
        return call(sessionId, TokenManager::accessToken);
    }

    /**
     * Revokes session {@code sessionId} at the tenant ({@link TokenManager#revoke()}, RFC 7009) and
     * clears its tokens.
     *
     * @throws TokenManagerException {@code INVALID_SESSION_ID}, and those of {@link TokenManager#revoke()}
     */
    public void revoke(String sessionId) {
        call(sessionId, m -> {
            m.revoke();
            return null;
        });
    }

    /**
     * Forgets session {@code sessionId}'s tokens (deletes them from the storage), with no request.
     *
     * @throws TokenManagerException {@code INVALID_SESSION_ID}, {@code STORAGE_FAILED}
     */
    public void signOut(String sessionId) {
        call(sessionId, m -> {
            m.signOut();
            return null;
        });
    }

    private <T> T call(String id, java.util.function.Function<TokenManager, T> work) {
        SessionId.check(id);
        TokenManager m = enter(id);
        try {
            return work.apply(m);
        } finally {
            leave(m);
        }
    }

    /**
     * An {@link HttpClient} whose requests to the tenant carry session {@code sessionId}'s token ({@link
     * TokenManager#httpClient()}: the token to the tenant's origin only, one refresh and resend after a
     * 401), over the shared client. Each request asks this object for the session's manager, so the
     * client may be kept as long as the app likes while the manager behind it is dropped when idle and
     * made again when needed.
     *
     * @throws TokenManagerException {@code INVALID_SESSION_ID}
     */
    public HttpClient httpClient(String sessionId) {
        SessionId.check(sessionId);
        return new BearerHttpClient(
                new BearerHttpClient.Source() {
                    @Override
                    public TokenManager enter() {
                        return Sessions.this.enter(sessionId);
                    }

                    @Override
                    public void leave(TokenManager manager) {
                        Sessions.leave(manager);
                    }
                },
                signIns.origin,
                http);
    }

    /** The tenant and client, and how many sessions are cached; never an id or a token. */
    @Override
    public String toString() {
        return "Sessions[baseUrl=" + signIns.origin + ", clientId=" + signIns.clientId + ", cached=" + cached() + "]";
    }

    /** The options of a {@link Sessions}. Immutable: each method returns a new builder. */
    public static final class Builder {
        private final TokenManager.Builder managers;
        private final int maxCached;
        private final Duration maxIdle;

        private Builder(TokenManager.Builder managers, int maxCached, Duration maxIdle) {
            this.managers = managers;
            this.maxCached = maxCached;
            this.maxIdle = maxIdle;
        }

        /** How many managers are kept in memory at most (default 1 000); past it the least recently used is dropped. */
        public Builder maxCached(int maxCached) {
            return new Builder(managers, maxCached, maxIdle);
        }

        /** How long an unused manager is kept in memory (default 5 min). */
        public Builder maxIdle(Duration maxIdle) {
            if (maxIdle == null) throw TokenManager.invalid("maxIdle", "must not be null");
            return new Builder(managers, maxCached, maxIdle);
        }

        /**
         * The sessions.
         *
         * @throws TokenManagerException {@code INVALID_OPTIONS} saying which option and why
         */
        public Sessions build() {
            return new Sessions(this);
        }
    }
}
