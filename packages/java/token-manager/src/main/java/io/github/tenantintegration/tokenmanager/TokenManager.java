package io.github.tenantintegration.tokenmanager;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.internal.Redact;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Signs in to a tenant of the Tenant Integration Service with OAuth 2.0 Authorization Code + PKCE and
 * keeps the session alive through refresh-token rotation, across threads and processes, with the
 * records, keys and locks of the TypeScript, Python and Go kits ({@code spec/token-store}).
 *
 * <ul>
 *   <li>sign-in with PKCE S256 and a random, single-use state compared in constant time before any
 *       request (RFC 6749 §4.1, §10.12; RFC 7636);
 *   <li>JSON token requests, as the contract's {@code POST /oauth/token} takes them;
 *   <li>the access token refreshed when it is used within the leeway of expiry (no timers), its expiry
 *       counted from the local receive time and {@code expires_in}, on an injectable {@link Clock};
 *   <li>one refresh however many threads ask (one flight), and across processes through the
 *       storage's lock, with the refresh intent of {@code spec/token-store} (paused and killed
 *       processes);
 *   <li>rotated tokens written durably before they are handed out; {@code invalid_grant} ends the
 *       session, 5xx and network errors keep it;
 *   <li>revocation (RFC 7009), local sign-out, change events, {@link TokenManagerException}s with the
 *       kits' codes, and a {@link System.Logger} that never receives a secret.
 * </ul>
 *
 * <p>Immutable once built and safe for concurrent use. Blocking calls wait on {@link ReentrantLock}s
 * and futures, never in {@code synchronized}, so they are safe on virtual threads; each has a {@link
 * CompletableFuture} variant.
 *
 * <pre>{@code
 * TokenManager manager = TokenManager.builder("https://acme.tenant.test", "my-client", "http://127.0.0.1:53682/callback")
 *         .scopes(Scope.PROFILE_READ)
 *         .storage(FileStorage.of(Path.of(System.getProperty("user.home"), ".config/my-cli/tokens.json")))
 *         .build();
 * HttpClient client = manager.httpClient(); // Authorization: Bearer …, one refresh after a 401
 * }</pre>
 */
public final class TokenManager implements AutoCloseable {
    /** After a failed write of new tokens, how long they are served from memory before the write is tried again. */
    static final long UNSAVED_RETRY_MS = 1000;

    private static final ExecutorService DEFAULT_EXECUTOR = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "tenant-integration-token-manager");
        thread.setDaemon(true);
        return thread;
    });

    final String origin;
    final String clientId;
    final String redirectUri;
    final String redirectTarget;
    final List<Scope> scopes;
    final Storage storage;
    final Storage pendingStorage;
    /** The session id (spec/token-store, "Sessions"), or null for the one session of the storage. */
    final String sessionId;
    /** The pending sign-ins, by state. */
    final Pending pending;

    final Lock lock;
    /** Whether processes share the storage through a lock: refresh intents are written and read. */
    final boolean intents;

    final HttpClient http;
    final System.Logger logger;
    final Clock clock;
    final Duration leeway;
    final Duration pendingLifetime;
    final Duration requestTimeout;
    final int attempts;
    final Duration retryDelay;
    final Duration intentWait;
    final List<Consumer<Event>> listeners;
    final Executor executor;
    final String tokensKey;
    final String intentKey;
    final String lockName;

    /** Guards the state below; never held across I/O. */
    final ReentrantLock mu = new ReentrantLock();

    /** The tokens in use; read without {@link #mu} by the fast path. */
    volatile TokenRecord current;
    /** Tokens whose write failed, held in memory and written again later. */
    volatile TokenRecord unsaved;
    /** Until when (ms, the manager's clock) unsaved tokens are served before their write is tried again. */
    volatile double retryWriteAfter;

    String rejected;
    int generation;
    CompletableFuture<String> flight;
    IntentRecord ownIntent;
    Intents.Beat ownBeat; // the beats of ownIntent (D7), until it is dropped
    TokenManagerException writeFailure;
    final Intents.Watch watch = new Intents.Watch();
    boolean warnedForeignIntent;
    /** A retry of the unsaved tokens' write is scheduled ({@link Refresh#retryWriteLater}). */
    boolean rewriting;
    /** {@link #close()} was called: no beat starts, no write is retried in the background. */
    boolean closed;
    /** Calls of a {@link Sessions} under way on this manager: it is not dropped while any is. */
    final AtomicInteger inUse = new AtomicInteger();
    /** When a {@link Sessions} last handed this manager out ({@link System#nanoTime()}). */
    volatile long lastUsed = System.nanoTime();

    private TokenManager(Builder b) {
        origin = Origins.tenantOrigin(b.baseUrl);
        if (b.clientId == null || b.clientId.isEmpty()) {
            throw invalid("clientId", "give the OAuth client identifier");
        }
        clientId = b.clientId;
        URI redirect;
        try {
            redirect = new URI(b.redirectUri);
        } catch (URISyntaxException | NullPointerException e) {
            throw invalid(
                    "redirectUri", "give the absolute redirect URI registered for the client, without a fragment");
        }
        if (!redirect.isAbsolute() || redirect.getHost() == null || redirect.getRawFragment() != null) {
            throw invalid(
                    "redirectUri", "give the absolute redirect URI registered for the client, without a fragment");
        }
        redirectUri = b.redirectUri;
        redirectTarget = Origins.normalTarget(redirect, true);
        if (b.scopes.isEmpty()) throw invalid("scopes", "give at least one scope, e.g. Scope.PROFILE_READ");
        scopes = List.copyOf(b.scopes);
        for (Duration d : List.of(b.pendingLifetime, b.requestTimeout, b.intentWait)) {
            if (d.isNegative() || d.isZero()) throw invalid("durations", "must be positive");
        }
        if (b.attempts < 1 || b.leeway.isNegative() || b.retryDelay.isNegative()) {
            throw invalid("options", "refreshAttempts must be at least 1 and durations not negative");
        }
        leeway = b.leeway;
        pendingLifetime = b.pendingLifetime;
        requestTimeout = b.requestTimeout;
        attempts = b.attempts;
        retryDelay = b.retryDelay;
        intentWait = b.intentWait;
        clock = b.clock;
        storage = b.storage != null ? b.storage : new MemoryStorage();
        pendingStorage = b.pendingStorage != null ? b.pendingStorage : storage;
        sessionId = b.sessionId;
        // The lock option wins, then the storage's own lock (a session's own one where the storage
        // has it), then the process's. Intents only where processes share the storage through a lock.
        Lock chosen = b.lock;
        if (chosen == null && sessionId != null && storage instanceof SessionLockingStorage per)
            chosen = per.sessionLock();
        if (chosen == null && storage instanceof LockingStorage locking) chosen = locking.lock();
        intents = chosen != null && !(storage instanceof MemoryStorage);
        lock = chosen != null ? chosen : b.processLock != null ? b.processLock : new ProcessLock();
        if (b.http != null && b.http.followRedirects() != HttpClient.Redirect.NEVER) {
            throw invalid(
                    "httpClient", "token requests must never follow a redirect: build it with followRedirects(NEVER)");
        }
        http = b.http != null ? b.http : defaultHttpClient();
        logger = b.logger != null ? b.logger : System.getLogger(TokenManager.class.getName());
        listeners = List.copyOf(b.listeners);
        executor = b.executor != null ? b.executor : DEFAULT_EXECUTOR;
        String prefix =
                "tenant-integration:" + origin + ":" + clientId + ":" + (sessionId == null ? "" : sessionId + ":");
        tokensKey = prefix + "tokens";
        intentKey = prefix + "intent";
        lockName = prefix + "lock";
        pending = new Pending(pendingStorage, logger, origin, clientId);
    }

    /** The client the manager makes when given none: HTTP/1.1, redirects never followed. */
    static HttpClient defaultHttpClient() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    static TokenManagerException invalid(String option, String why) {
        return new TokenManagerException(ErrorCode.INVALID_OPTIONS, option + ": " + why);
    }

    /**
     * The tenant origin a manager built with {@code baseUrl} uses in its record names ({@code
     * tenant-integration:<origin>:<clientId>:…}, {@code spec/token-store/README.md}): checked and
     * normalized as the builder does. For storages made for one tenant, such as the PostgreSQL one.
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} for a base URL the builder would refuse
     */
    public static String tenantOrigin(String baseUrl) {
        return Origins.tenantOrigin(baseUrl);
    }

    /**
     * A builder of a manager for the tenant at {@code baseUrl}, the OAuth client {@code clientId} and
     * its registered {@code redirectUri}.
     *
     * @param baseUrl the tenant's origin, e.g. {@code https://acme.tenant.test} (https, or http to a
     *     loopback host; no path: the manager adds {@code /oauth/…} itself)
     * @param clientId the OAuth client identifier
     * @param redirectUri the redirect URI registered for the client, exactly as registered
     */
    public static Builder builder(String baseUrl, String clientId, String redirectUri) {
        return new Builder(baseUrl, clientId, redirectUri);
    }

    // ---- sign-in -----------------------------------------------------------------------------

    /**
     * Makes a PKCE pair and a state, stores them as a pending sign-in found by its state (any number
     * may be pending: two tabs, a double click; {@code spec/token-store/README.md}, "Pending sign-ins by
     * state") and returns the authorize URL to send the browser to, asking for the builder's scopes.
     *
     * @throws TokenManagerException {@code STORAGE_FAILED}
     * @see <a href="https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1">RFC 6749 §4.1.1</a>, RFC 7636 §4.3
     */
    public AuthorizationRequest beginAuthorization() {
        return SignIn.begin(this, scopes, sessionId, null);
    }

    /**
     * {@link #beginAuthorization()} asking for {@code scopes} instead of the builder's.
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} without a scope; {@code STORAGE_FAILED}
     */
    public AuthorizationRequest beginAuthorization(Collection<Scope> scopes) {
        if (scopes == null || scopes.isEmpty()) throw invalid("scopes", "give at least one scope");
        return SignIn.begin(this, List.copyOf(scopes), sessionId, null);
    }

    /** {@link #beginAuthorization()} on the manager's executor. */
    public CompletableFuture<AuthorizationRequest> beginAuthorizationAsync() {
        return async(this::beginAuthorization);
    }

    /**
     * Checks the callback URL, takes the pending sign-in (single use), checks the state in constant
     * time, exchanges the code (JSON, with the verifier) and stores the tokens. A callback that is not
     * a full URL at the redirect URI is refused before the pending sign-in is taken.
     *
     * @param callbackUrl the whole URL the browser was sent back to
     * @return the new session
     * @throws TokenManagerException {@code INVALID_CALLBACK}, {@code NO_PENDING_SIGN_IN},
     *     {@code STATE_MISSING}, {@code STATE_MISMATCH}, {@code STATE_EXPIRED},
     *     {@code AUTHORIZATION_DENIED} (no request sent); {@code OAUTH_ERROR}, {@code TRANSIENT},
     *     {@code INVALID_RESPONSE}, {@code STORAGE_FAILED}
     * @see <a href="https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2">RFC 6749 §4.1.2, §4.1.3, §10.12</a>,
     *     RFC 7636 §4.5, RFC 9700 §4.4
     */
    public SessionInfo completeAuthorization(String callbackUrl) {
        return SignIn.complete(this, callbackUrl);
    }

    /** {@link #completeAuthorization} on the manager's executor. */
    public CompletableFuture<SessionInfo> completeAuthorizationAsync(String callbackUrl) {
        return async(() -> completeAuthorization(callbackUrl));
    }

    // ---- tokens ------------------------------------------------------------------------------

    /**
     * A valid access token, refreshed first (once, however many threads ask) when it is within the
     * leeway of expiry or was refused ({@link #onUnauthorized}). The refresh runs under the storage's
     * lock and its protocol; rotated tokens are written before they are handed out.
     *
     * @throws TokenManagerException {@code NOT_SIGNED_IN}, {@code SESSION_ENDED} (tokens cleared),
     *     {@code TRANSIENT} (tokens kept), {@code OAUTH_ERROR}, {@code INVALID_RESPONSE},
     *     {@code STORAGE_FAILED}, {@code LOCK_TIMEOUT}, {@code ABORTED} (interrupted)
     * @see <a href="https://www.rfc-editor.org/rfc/rfc6749#section-6">RFC 6749 §6</a>, RFC 9700 §4.14.2
     */
    public String accessToken() {
        String token = Refresh.fastToken(this);
        if (token != null) return token;
        return await(Refresh.flight(this));
    }

    /**
     * {@link #accessToken()} as a future. Cancelling it stops this caller's wait, not the refresh,
     * which goes on for the others.
     */
    public CompletableFuture<String> accessTokenAsync() {
        String token = Refresh.fastToken(this);
        if (token != null) return CompletableFuture.completedFuture(token);
        return Refresh.flight(this).copy();
    }

    /**
     * Marks the current access token unusable when it equals {@code rejected} (an API answered 401),
     * so that the next {@link #accessToken()} reads the storage again and, unless it holds another
     * token, refreshes. No I/O.
     *
     * @see <a href="https://www.rfc-editor.org/rfc/rfc6750#section-3.1">RFC 6750 §3.1</a>
     */
    public void onUnauthorized(String rejected) {
        mu.lock();
        try {
            TokenRecord now = current;
            if (now != null && now.accessToken.equals(rejected)) {
                this.rejected = rejected;
                current = null;
            }
        } finally {
            mu.unlock();
        }
    }

    // ---- session -----------------------------------------------------------------------------

    /**
     * The session's expiry and scope, from the storage, with no request; empty without tokens.
     *
     * @throws TokenManagerException {@code STORAGE_FAILED}
     */
    public Optional<SessionInfo> session() {
        return Session.info(this);
    }

    /** Whether the storage holds tokens (perhaps expired: a refresh may still work). */
    public boolean isSignedIn() {
        return session().isPresent();
    }

    /** {@link #isSignedIn()} on the manager's executor. */
    public CompletableFuture<Boolean> isSignedInAsync() {
        return async(this::isSignedIn);
    }

    /**
     * Revokes the current access token at {@code POST /oauth/revoke} (a form body with
     * {@code client_id}, RFC 7009 §2.1), which disconnects the integration, then clears the tokens. An
     * expired access token is refreshed first; without a session it only clears. On failure the tokens
     * are kept.
     *
     * @throws TokenManagerException {@code OAUTH_ERROR}, {@code TRANSIENT}, {@code STORAGE_FAILED}
     */
    public void revoke() {
        Session.revoke(this);
    }

    /** {@link #revoke()} on the manager's executor. */
    public CompletableFuture<Void> revokeAsync() {
        return async(() -> {
            revoke();
            return null;
        });
    }

    /**
     * Forgets the tokens locally (deletes them from the storage), with no request.
     *
     * @throws TokenManagerException {@code STORAGE_FAILED}
     */
    public void signOut() {
        Session.clear(this);
        emit(Event.of(Event.Kind.SIGNED_OUT));
    }

    /**
     * Stops the manager's background work: the beats of its refresh intent ({@code spec/token-store},
     * "Paused processes", step 4) and the retried write of tokens whose write failed. The intent stays
     * stored: another process gives it up once it has watched it for the intent wait without a beat.
     * Close the manager once its calls are done (try-with-resources); the storage and the HTTP client
     * given to it stay the caller's to close.
     */
    @Override
    public void close() {
        mu.lock();
        try {
            closed = true;
        } finally {
            mu.unlock();
        }
        Intents.stopBeats(this);
    }

    /** {@link #signOut()} on the manager's executor. */
    public CompletableFuture<Void> signOutAsync() {
        return async(() -> {
            signOut();
            return null;
        });
    }

    // ---- HTTP --------------------------------------------------------------------------------

    /**
     * An {@link HttpClient} that sends requests for the tenant's origin with {@code Authorization:
     * Bearer <token>} (and {@code Accept: application/json} when the request has no {@code Accept}),
     * and after a 401 tells the manager ({@link #onUnauthorized}) and sends the request once more with
     * the new token. Requests for any other origin go through untouched, without the token. Assumption
     * (not in the service description, which shows no status for an expired or revoked token): the API
     * answers such a token 401 (RFC 6750 §3.1).
     *
     * @param base the client that sends (its redirects must be off: a token never follows one)
     * @throws TokenManagerException {@code INVALID_OPTIONS} when {@code base} follows redirects
     */
    public HttpClient httpClient(HttpClient base) {
        return new BearerHttpClient(this, base);
    }

    /** {@link #httpClient(HttpClient)} over a client of the manager's defaults (HTTP/1.1, no redirects). */
    public HttpClient httpClient() {
        return new BearerHttpClient(this, defaultHttpClient());
    }

    /**
     * Whether a request to {@code uri} may carry this manager's token: it is on the tenant's origin (the
     * same scheme, host and port). For adapters of other HTTP clients: never send the token elsewhere, so
     * never over a redirect to another origin (RFC 6750 §5.3, RFC 9700 §4.7).
     */
    public boolean isForTenant(URI uri) {
        return uri != null
                && uri.getHost() != null
                && Origins.normalTarget(uri, false).equals(origin);
    }

    /** The tenant's origin, normalized, e.g. {@code https://acme.tenant.test}. */
    public String baseUrl() {
        return origin;
    }

    /** The OAuth client identifier. */
    public String clientId() {
        return clientId;
    }

    /** The redirect URI, as given (the loopback sign-in listens on it). */
    public String redirectUri() {
        return redirectUri;
    }

    /** The scopes asked for by default. */
    public List<Scope> scopes() {
        return scopes;
    }

    /** The session id the manager was built with ({@link Builder#sessionId}), if any. */
    public Optional<String> sessionId() {
        return Optional.ofNullable(sessionId);
    }

    /** The tenant and the client, never a token. */
    @Override
    public String toString() {
        return "TokenManager[baseUrl=" + origin + ", clientId=" + clientId + ", storage="
                + storage.getClass().getSimpleName() + "]";
    }

    // ---- shared by the package -----------------------------------------------------------------

    double nowMs() {
        Instant now = clock.instant();
        return now.getEpochSecond() * 1000.0 + now.getNano() / 1_000_000.0;
    }

    boolean fresh(TokenRecord record) {
        return record.fresh(nowMs(), leeway.toMillis());
    }

    SessionInfo info(TokenRecord record) {
        return new SessionInfo(Instant.ofEpochMilli(Math.round(record.expiresAtMs(nowMs()))), record.scope);
    }

    /** Every token in play plus {@code extra}, for scrubbing. */
    List<String> known(List<String> extra) {
        List<String> out = new ArrayList<>(extra);
        for (TokenRecord r : new TokenRecord[] {current, unsaved}) {
            if (r != null) {
                out.add(r.accessToken);
                out.add(r.refreshToken);
            }
        }
        return out;
    }

    void emit(Event event) {
        for (Consumer<Event> listener : listeners) {
            try {
                listener.accept(event);
            } catch (RuntimeException e) {
                log(
                        System.Logger.Level.WARNING,
                        "an onChange listener threw; ignored",
                        "error",
                        e.getClass().getName());
            }
        }
    }

    /** Logs {@code message} and its key-value pairs, scrubbed of every token in play. */
    void log(System.Logger.Level level, String message, Object... pairs) {
        if (!logger.isLoggable(level)) return;
        StringBuilder text = new StringBuilder(message);
        for (int i = 0; i + 1 < pairs.length; i += 2)
            text.append(' ').append(pairs[i]).append('=').append(pairs[i + 1]);
        // The id may be personal data (an e-mail address): at debug level only, on every event there.
        if (sessionId != null && level.getSeverity() <= System.Logger.Level.DEBUG.getSeverity())
            text.append(" session_id=").append(sessionId);
        logger.log(level, Redact.scrub(text.toString(), known(List.of())));
    }

    <T> CompletableFuture<T> async(Supplier<T> call) {
        return CompletableFuture.supplyAsync(call, executor);
    }

    /** Waits for {@code future} and returns its value, or throws its error as it was thrown. */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for the token");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof CompletionException && cause.getCause() != null) cause = cause.getCause();
            if (cause instanceof RuntimeException runtime) throw runtime;
            if (cause instanceof Error error) throw error;
            throw new TokenManagerException(ErrorCode.STORAGE_FAILED, "unexpected failure", cause);
        }
    }

    /**
     * The options of a {@link TokenManager}. Immutable: each method returns a new builder, so one may
     * be shared and reused across threads.
     */
    public static final class Builder {
        private final String baseUrl;
        private final String clientId;
        private final String redirectUri;
        private List<Scope> scopes = List.of();
        private Storage storage;
        private Storage pendingStorage;
        private String sessionId;
        private Lock lock;
        private ProcessLock processLock; // the in-process lock when no other is chosen: one per Sessions
        private Clock clock = Clock.systemUTC();
        private HttpClient http;
        private System.Logger logger;
        private Duration leeway = Duration.ofSeconds(60);
        private Duration pendingLifetime = Duration.ofMinutes(10);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private int attempts = 3;
        private Duration retryDelay = Duration.ofMillis(300);
        private Duration intentWait = Duration.ofSeconds(20);
        private List<Consumer<Event>> listeners = List.of();
        private Executor executor;

        private Builder(String baseUrl, String clientId, String redirectUri) {
            this.baseUrl = baseUrl;
            this.clientId = clientId;
            this.redirectUri = redirectUri;
        }

        private Builder copy() {
            Builder b = new Builder(baseUrl, clientId, redirectUri);
            b.scopes = scopes;
            b.storage = storage;
            b.pendingStorage = pendingStorage;
            b.sessionId = sessionId;
            b.lock = lock;
            b.processLock = processLock;
            b.clock = clock;
            b.http = http;
            b.logger = logger;
            b.leeway = leeway;
            b.pendingLifetime = pendingLifetime;
            b.requestTimeout = requestTimeout;
            b.attempts = attempts;
            b.retryDelay = retryDelay;
            b.intentWait = intentWait;
            b.listeners = listeners;
            b.executor = executor;
            return b;
        }

        private Builder with(Consumer<Builder> change) {
            Builder b = copy();
            change.accept(b);
            return b;
        }

        private static <T> T given(T value, String name) {
            if (value == null) throw invalid(name, "must not be null");
            return value;
        }

        /** The scopes asked for (at least one). */
        public Builder scopes(Scope... scopes) {
            return scopes(List.of(given(scopes, "scopes")));
        }

        /** The scopes asked for (at least one). */
        public Builder scopes(Collection<Scope> scopes) {
            List<Scope> copy = List.copyOf(given(scopes, "scopes"));
            return with(b -> b.scopes = copy);
        }

        /**
         * Where the tokens live (default: a new {@link MemoryStorage}). A {@link LockingStorage} (the
         * file storage, Redis) brings its cross-process lock.
         */
        public Builder storage(Storage storage) {
            given(storage, "storage");
            return with(b -> b.storage = storage);
        }

        /**
         * The session this manager keeps (its user's id, a connection row's id): its records are named
         * {@code tenant-integration:<origin>:<clientId>:<sessionId>:…} (on Redis one hash slot per
         * session), with a refresh lock of its own, so many sessions share one storage ({@code
         * spec/token-store/README.md}, "Sessions"). Without one the manager keeps the one session of the
         * storage, as before. A server acting for many users uses {@link Sessions}, which names the
         * session on every call.
         *
         * @throws TokenManagerException {@code INVALID_SESSION_ID} for an id outside the rule ({@link
         *     SessionId#check})
         */
        public Builder sessionId(String sessionId) {
            SessionId.check(sessionId);
            return with(b -> b.sessionId = sessionId);
        }

        /** The builder without a session id, for {@link Sessions}. */
        Builder withoutSession() {
            return with(b -> b.sessionId = null);
        }

        /** The builder whose managers share {@code lock} when they choose no other. */
        Builder sharingProcessLock(ProcessLock lock) {
            return with(b -> b.processLock = lock);
        }

        boolean hasSessionId() {
            return sessionId != null;
        }

        Storage storageOrNull() {
            return storage;
        }

        Lock lockOrNull() {
            return lock;
        }

        HttpClient httpOrNull() {
            return http;
        }

        /** Where the pending sign-ins live (default: the storage). */
        public Builder pendingStorage(Storage storage) {
            given(storage, "pendingStorage");
            return with(b -> b.pendingStorage = storage);
        }

        /** The lock around a refresh, instead of the storage's (bring your own lock). */
        public Builder lock(Lock lock) {
            given(lock, "lock");
            return with(b -> b.lock = lock);
        }

        /** The clock (default: the system's): tests and the sandbox's test clock inject theirs. */
        public Builder clock(Clock clock) {
            given(clock, "clock");
            return with(b -> b.clock = clock);
        }

        /**
         * The client of the token and revocation requests (default: one of the manager's own, HTTP/1.1).
         * Its redirects must be off ({@code followRedirects(NEVER)}).
         */
        public Builder httpClient(HttpClient client) {
            given(client, "httpClient");
            return with(b -> b.http = client);
        }

        /**
         * The logger (default: {@code System.getLogger("io.github.tenantintegration.tokenmanager.TokenManager")}).
         * No message holds a token, code, verifier or state.
         */
        public Builder logger(System.Logger logger) {
            given(logger, "logger");
            return with(b -> b.logger = logger);
        }

        /** Refresh when the access token expires within this (default 60 s, at most half its lifetime). */
        public Builder refreshLeeway(Duration leeway) {
            given(leeway, "refreshLeeway");
            return with(b -> b.leeway = leeway);
        }

        /** How long a pending sign-in stays valid (default 10 min). */
        public Builder pendingLifetime(Duration lifetime) {
            given(lifetime, "pendingLifetime");
            return with(b -> b.pendingLifetime = lifetime);
        }

        /**
         * The bound of each token request (default 10 s). It counts only the time the process ran: a
         * process stopped while it waits (SIGSTOP, a debugger) reads an answer that came meanwhile.
         */
        public Builder requestTimeout(Duration timeout) {
            given(timeout, "requestTimeout");
            return with(b -> b.requestTimeout = timeout);
        }

        /**
         * The attempts of a refresh the tenant cannot have handled (no connection, 429, 503); default 3.
         * Any other failure is never retried: the tenant may have rotated the token.
         */
        public Builder refreshAttempts(int attempts) {
            return with(b -> b.attempts = attempts);
        }

        /** The first pause between those attempts, doubled each time (default 300 ms). */
        public Builder retryDelay(Duration delay) {
            given(delay, "retryDelay");
            return with(b -> b.retryDelay = delay);
        }

        /**
         * How long this process watches another process's refresh of the same refresh token before it
         * presents the token itself (default 20 s; {@code spec/token-store/README.md}, "Paused
         * processes"). A failed read of the storage, or a pause of this process, starts the watch again.
         */
        public Builder intentWait(Duration wait) {
            given(wait, "intentWait");
            return with(b -> b.intentWait = wait);
        }

        /**
         * Adds a listener called on every {@link Event} (sign-in, refresh, session ended, sign-out,
         * revocation, storage failure), in the thread that caused it. No event holds a token.
         */
        public Builder onChange(Consumer<Event> listener) {
            given(listener, "onChange");
            List<Consumer<Event>> more = new ArrayList<>(listeners);
            more.add(listener);
            List<Consumer<Event>> copy = List.copyOf(more);
            return with(b -> b.listeners = copy);
        }

        /**
         * Where refreshes and the {@code …Async} variants run (default: a shared pool of daemon
         * threads); e.g. {@code Executors.newVirtualThreadPerTaskExecutor()} on Java 21.
         */
        public Builder executor(Executor executor) {
            given(executor, "executor");
            return with(b -> b.executor = executor);
        }

        /**
         * The manager.
         *
         * @throws TokenManagerException {@code INVALID_OPTIONS} saying which option and why
         */
        public TokenManager build() {
            return new TokenManager(this);
        }
    }
}
