package io.github.tenantintegration.conformance;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.filestorage.FileStorage;
import io.github.tenantintegration.internal.Json;
import io.github.tenantintegration.postgresstorage.PostgresStorage;
import io.github.tenantintegration.redisstorage.RedisStorage;
import io.github.tenantintegration.tokenmanager.AuthorizationRequest;
import io.github.tenantintegration.tokenmanager.Event;
import io.github.tenantintegration.tokenmanager.Lock;
import io.github.tenantintegration.tokenmanager.LockingStorage;
import io.github.tenantintegration.tokenmanager.MemoryStorage;
import io.github.tenantintegration.tokenmanager.ProcessLock;
import io.github.tenantintegration.tokenmanager.Storage;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Java actor of the conformance suite ({@code spec/conformance/PROTOCOL.md}): drives {@link
 * TokenManager} through its public API only, a thread per command, reading its configuration from
 * {@code CONFORMANCE_ACTOR}, commands from standard input and writing answers and events to standard
 * output, one JSON object per line. It never prints a token, code, verifier or state.
 *
 * <p>The faults of {@code arm} are reached through the seams an application has too: the HttpClient
 * given with {@code httpClient} ({@code sending}, {@code in-flight}) and the storage given with {@code
 * storage}, whose lock is the bring-your-own-lock seam ({@code locked}, {@code answered}, {@code "lock":
 * "none"}).
 */
public final class Actor {
    private final Map<String, Object> config;
    private final String name;
    private final String tenant;
    private final Output out;
    private final Fault fault;
    private final AtomicLong offsetMs = new AtomicLong();
    private final AtomicLong refreshes = new AtomicLong();
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    private final TokenManager manager;
    private final ActorSessions sessions; // the sessions feature (ActorSessions), on the same storage

    /** The manager's clock: the wall clock plus the actor's offset, which {@code clock} moves. */
    private final class OffsetClock extends Clock {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.now().plusMillis(offsetMs.get());
        }
    }

    private Actor(Map<String, Object> config, Output out) {
        this.config = config;
        this.name = (String) config.get("name");
        this.tenant = (String) config.get("tenant");
        this.out = out;
        this.fault = new Fault(out);
        offsetMs.set(number(config.get("clockOffsetMs"), 0));
        Map<String, Object> storageSpec = object(config.get("storage"));
        Map<String, Object> options = object(config.getOrDefault("manager", Map.of()));
        Storage inner = Storages.open(storageSpec, options, out, config);
        Lock lock = inner instanceof LockingStorage locking ? locking.lock() : new ProcessLock(lockWait(options));
        if ("none".equals(storageSpec.get("lock"))) lock = new ArmedStorage.Unlocked();
        List<Scope> scopes = new ArrayList<>();
        for (Object scope : (List<?>) config.get("scopes")) {
            scopes.add(Scope.find((String) scope)
                    .orElseThrow(() -> new IllegalArgumentException("not a scope: " + scope)));
        }
        // What the manager and the sessions share: the tenant, the clock, the log, the events, the timings.
        TokenManager.Builder common = TokenManager.builder(
                        tenant, (String) config.get("clientId"), (String) config.get("redirectUri"))
                .scopes(scopes)
                .clock(new OffsetClock())
                .logger(out.logger("tokenmanager"))
                .onChange(this::event);
        if (options.get("requestTimeoutMs") instanceof Number ms)
            common = common.requestTimeout(Duration.ofMillis(ms.longValue()));
        if (options.get("intentWaitMs") instanceof Number ms)
            common = common.intentWait(Duration.ofMillis(ms.longValue()));
        this.manager = common.storage(new ArmedStorage(inner, lock, fault))
                .httpClient(new ActorHttpClient(http, name, fault))
                .build();
        // The sessions get the storage itself (its lock per session, its pending sign-ins by state);
        // "lock": "none" gives them the lock that does not lock, memory the process lock. No fault is
        // armed on them.
        TokenManager.Builder sessionManagers = common.storage(inner).httpClient(new ActorHttpClient(http, name, null));
        if ("none".equals(storageSpec.get("lock")) || inner instanceof MemoryStorage)
            sessionManagers = sessionManagers.lock(lock);
        this.sessions = new ActorSessions(sessionManagers, http, name, tenant, refreshes);
    }

    static Duration lockWait(Map<String, Object> options) {
        return options.get("lockWaitMs") instanceof Number ms
                ? Duration.ofMillis(ms.longValue())
                : Duration.ofSeconds(60);
    }

    private void event(Event event) {
        String what = switch (event.kind()) {
            case TOKENS_REFRESHED -> "refreshed";
            case SESSION_ENDED -> "ended";
            case SIGNED_OUT -> "signed-out";
            case STORAGE_FAILED -> "storage-failed";
            default -> null;
        };
        if (what == null) return;
        if (event.kind() == Event.Kind.TOKENS_REFRESHED) refreshes.incrementAndGet();
        Map<String, Object> message = Output.map("event", "session", "what", what);
        if (event.error() != null) message.put("code", event.error().code().name());
        out.say(message);
    }

    /** An error of the actor's own (not the kit's). */
    static final class ActorException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String code;

        ActorException(String code, String message) {
            super(message);
            this.code = code;
        }
    }

    private HttpResponse<Void> get(URI target, String token) {
        HttpRequest.Builder request = HttpRequest.newBuilder(target)
                .timeout(Duration.ofSeconds(30))
                .header(ActorHttpClient.ACTOR_HEADER, name);
        if (token != null) request.header("Authorization", "Bearer " + token).header("Accept", "application/json");
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.discarding());
        } catch (IOException e) {
            throw new ActorException(
                    "UNEXPECTED",
                    "the request to " + target.getPath() + " failed ("
                            + e.getClass().getSimpleName() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ActorException("UNEXPECTED", "interrupted");
        }
    }

    private Map<String, Object> signIn() {
        AuthorizationRequest request = manager.beginAuthorization();
        HttpResponse<Void> response = get(request.url(), null);
        String location = response.headers().firstValue("Location").orElse(null);
        if ((response.statusCode() != 302 && response.statusCode() != 303) || location == null) {
            throw new ActorException(
                    "UNEXPECTED",
                    "the authorize request was answered " + response.statusCode() + " without a redirect");
        }
        manager.completeAuthorization(request.url().resolve(location).toString());
        return Map.of();
    }

    /** Gets the user, with one refresh-and-retry after a 401, as the kit's bearer client does. */
    private Map<String, Object> call() {
        long before = refreshes.get();
        URI user = URI.create(tenant.replaceAll("/+$", "") + "/api/v1/auth/user");
        String token = manager.accessToken();
        HttpResponse<Void> response = get(user, token);
        if (response.statusCode() == 401) {
            manager.onUnauthorized(token);
            response = get(user, manager.accessToken());
        }
        return Output.map("status", response.statusCode(), "refreshed", refreshes.get() > before);
    }

    private void run(Map<String, Object> command) {
        Object id = command.get("id");
        try {
            List<ActorSessions.Named> list = ActorSessions.sessionsOf(command);
            Map<String, Object> result = switch ((String) command.get("cmd")) {
                case "sign-in" -> list == null ? signIn() : sessions.signIn(list);
                case "call" -> list == null ? call() : sessions.call(list);
                case "refuse-ids" -> sessions.refuseIds(command);
                case "replay-callback" -> sessions.replayCallback(command);
                case "clock" -> {
                    if (!(command.get("offsetMs") instanceof Number offset))
                        throw new ActorException("UNEXPECTED", "clock: offsetMs must be a number");
                    offsetMs.set(offset.longValue());
                    yield Map.of();
                }
                case "arm" -> {
                    String refused =
                            fault.arm(String.valueOf(command.get("point")), String.valueOf(command.get("then")));
                    if (refused != null)
                        throw new ActorException(
                                refused, "cannot arm " + command.get("point") + " / " + command.get("then"));
                    yield Map.of();
                }
                case "status" -> Output.map("signedIn", manager.isSignedIn());
                case "revoke" -> {
                    manager.revoke();
                    yield Map.of();
                }
                case "sign-out" -> {
                    manager.signOut();
                    yield Map.of();
                }
                default -> throw new ActorException("UNEXPECTED", "unknown command " + command.get("cmd"));
            };
            out.say(Output.map("id", id, "ok", true, "result", result));
        } catch (TokenManagerException e) {
            out.say(Output.map(
                    "id",
                    id,
                    "ok",
                    false,
                    "error",
                    Output.map(
                            "code", e.code().name(), "name", e.getClass().getSimpleName(), "message", e.getMessage())));
        } catch (ActorException e) {
            out.say(Output.map(
                    "id",
                    id,
                    "ok",
                    false,
                    "error",
                    Output.map("code", e.code, "name", "ActorException", "message", e.getMessage())));
        } catch (RuntimeException e) {
            out.say(Output.map(
                    "id",
                    id,
                    "ok",
                    false,
                    "error",
                    Output.map(
                            "code",
                            "UNEXPECTED",
                            "name",
                            e.getClass().getSimpleName(),
                            "message",
                            String.valueOf(e.getMessage()))));
        }
    }

    /** The protocol's error object of a failure: the kit's stable code, else {@code UNEXPECTED}. */
    private Map<String, Object> failure(RuntimeException e) {
        String code = e instanceof TokenManagerException kit ? kit.code().name() : "UNEXPECTED";
        return Output.map(
                "code", code, "name", e.getClass().getSimpleName(), "message", String.valueOf(e.getMessage()));
    }

    static long number(Object value, long fallback) {
        return value instanceof Number number ? number.longValue() : fallback;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object value) {
        if (value instanceof Map<?, ?> map) return (Map<String, Object>) map;
        throw new IllegalArgumentException("expected a JSON object");
    }

    /**
     * Starts the actor: reads {@code CONFORMANCE_ACTOR}, makes the manager, says ready, then serves
     * commands until {@code exit} or the end of standard input.
     */
    public static void main(String[] args) throws IOException {
        if (List.of(args).contains("--warm")) {
            Warm.run();
            System.exit(0);
        }
        // Idle connections to the tenant are let go before the sandbox's (Node's 5 s keep-alive) would
        // close them: a token request sent on a connection the server is closing is reset, and a refresh
        // that may have reached the tenant is never sent again (TRANSIENT), as a server's pool would
        // avoid (the Go actor's IdleConnTimeout). Read once, when the first HttpClient is made.
        System.setProperty("jdk.httpclient.keepalive.timeout", "3");
        Output out = new Output();
        Map<String, Object> config =
                Json.parseObject(System.getenv("CONFORMANCE_ACTOR")).orElse(null);
        if (config == null) {
            System.err.println("the actor cannot start: CONFORMANCE_ACTOR is not set or not JSON");
            System.exit(2);
        }
        if (!"java".equals(config.get("target"))) {
            System.err.println(
                    "the actor cannot start: this actor serves the target java, not " + config.get("target"));
            System.exit(2);
        }
        Actor actor;
        try {
            actor = new Actor(config, out);
        } catch (RuntimeException e) {
            System.err.println("the actor cannot start: " + e.getMessage());
            System.exit(2);
            return;
        }
        out.say(Output.map(
                "event",
                "ready",
                "pid",
                ProcessHandle.current().pid(),
                "target",
                "java",
                "runtime",
                "java " + System.getProperty("java.version"),
                // A server's many sessions (PROTOCOL.md, "Sessions"): the kit's Sessions (ActorSessions).
                "features",
                List.of("sessions")));
        ExecutorService threads = Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, "actor-command");
            thread.setDaemon(true);
            return thread;
        });
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            Map<String, Object> command = Json.parseObject(line).orElse(null);
            if (command == null || !(command.get("cmd") instanceof String cmd)) {
                System.err.println("ignored a line that is not a command (" + line.length() + " characters)");
                continue;
            }
            if (!(command.get("id") instanceof Long)) {
                System.err.println("ignored a command without an integer id");
                continue;
            }
            if (cmd.equals("exit")) {
                // The manager closed first: a close that fails is the answer, and the exit status 1.
                RuntimeException failed = actor.close();
                out.say(
                        failed == null
                                ? Output.map("id", command.get("id"), "ok", true, "result", Map.of())
                                : Output.map("id", command.get("id"), "ok", false, "error", actor.failure(failed)));
                Storages.close();
                System.exit(failed == null ? 0 : 1);
            }
            threads.execute(() -> actor.run(command));
        }
        // The end of input (the orchestrator is gone): close and leave, as a process whose input ends.
        RuntimeException failed = actor.close();
        if (failed != null) System.err.println("the kit did not close: " + failed);
        Storages.close();
        System.exit(failed == null ? 0 : 1);
    }

    /**
     * Closes the manager and every served session's manager as a user's process does when its work
     * ends (their intents' beats and retried writes stop; try-with-resources would do the same). The JVM then exits with {@code System.exit}:
     * the Lettuce clients' shutdown waits for quiet periods, and every thread of the kit is a daemon.
     *
     * @return the close's failure, or null
     */
    private RuntimeException close() {
        try {
            manager.close();
            sessions.close();
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** Its name and tenant. */
    @Override
    public String toString() {
        return "Actor[" + name + ", " + tenant + ", " + config.get("target") + "]";
    }

    /** The storage of a storage spec: memory, a token file, one Redis, a Redis Cluster or PostgreSQL. */
    static final class Storages {
        private static final java.util.List<AutoCloseable> OPENED = new java.util.concurrent.CopyOnWriteArrayList<>();

        private Storages() {}

        static Storage open(
                Map<String, Object> spec, Map<String, Object> options, Output out, Map<String, Object> config) {
            String kind = String.valueOf(spec.get("kind"));
            return switch (kind) {
                case "memory" -> new MemoryStorage();
                case "file" -> {
                    FileStorage.Builder file = FileStorage.builder(Path.of((String) spec.get("path")))
                            .logger(out.logger("filestorage"));
                    if (spec.get("staleMs") instanceof Number stale)
                        file = file.staleAfter(Duration.ofMillis(stale.longValue()));
                    if (options.get("lockWaitMs") instanceof Number wait)
                        file = file.lockTimeout(Duration.ofMillis(wait.longValue()));
                    yield file.build();
                }
                case "redis", "redis-cluster" -> redis(kind, spec, options, out);
                case "postgres" -> postgres(spec, options, config);
                default -> throw new ActorException("UNSUPPORTED", "the Java kit has no storage of kind " + kind);
            };
        }

        /** The Redis storage of a spec: a client of one server at "url", or of the cluster seeded by "urls". */
        private static Storage redis(String kind, Map<String, Object> spec, Map<String, Object> options, Output out) {
            RedisStorage.Builder builder;
            if (kind.equals("redis")) {
                io.lettuce.core.RedisClient client =
                        io.lettuce.core.RedisClient.create(RedisStorage.clientResources(), (String) spec.get("url"));
                client.setOptions(RedisStorage.clientOptions());
                builder = RedisStorage.builder(client);
            } else {
                List<io.lettuce.core.RedisURI> seeds = new ArrayList<>();
                for (Object url : (List<?>) spec.get("urls")) seeds.add(io.lettuce.core.RedisURI.create((String) url));
                io.lettuce.core.cluster.RedisClusterClient client =
                        io.lettuce.core.cluster.RedisClusterClient.create(RedisStorage.clientResources(), seeds);
                client.setOptions(RedisStorage.clusterClientOptions());
                builder = RedisStorage.builder(client);
            }
            builder = builder.prefix(String.valueOf(spec.getOrDefault("prefix", "")))
                    .logger(out.logger("redisstorage"));
            if (spec.get("leaseMs") instanceof Number lease)
                builder = builder.lease(Duration.ofMillis(lease.longValue()));
            if (options.get("lockWaitMs") instanceof Number wait)
                builder = builder.waitTimeout(Duration.ofMillis(wait.longValue()));
            RedisStorage storage = builder.build();
            OPENED.add(storage::close); // the clients are left to the exit: their shutdown waits for quiet periods
            return storage;
        }

        /**
         * The PostgreSQL storage of a spec: its "url" ({@code postgres://user@host:port/database}) as the
         * driver's DataSource (pgjdbc's {@code PGSimpleDataSource}, a connection per checkout, a connect
         * timeout so that a server that is down fails a call in time), its "table".
         */
        private static Storage postgres(
                Map<String, Object> spec, Map<String, Object> options, Map<String, Object> config) {
            URI url = URI.create(String.valueOf(spec.get("url")));
            org.postgresql.ds.PGSimpleDataSource source = new org.postgresql.ds.PGSimpleDataSource();
            source.setUrl("jdbc:postgresql://" + url.getHost() + ":" + url.getPort() + url.getPath());
            source.setUser(url.getUserInfo());
            source.setApplicationName(String.valueOf(config.get("name")));
            source.setConnectTimeout(5);
            PostgresStorage.Builder builder = PostgresStorage.builder(
                            source, (String) config.get("tenant"), (String) config.get("clientId"))
                    .table(String.valueOf(spec.get("table")));
            if (options.get("lockWaitMs") instanceof Number wait)
                builder = builder.waitTimeout(Duration.ofMillis(wait.longValue()));
            return builder.build();
        }

        static void close() {
            for (AutoCloseable opened : OPENED) {
                try {
                    opened.close();
                } catch (Exception e) {
                    // Exiting anyway.
                }
            }
        }
    }
}
