package io.github.tenantintegration.redisstorage;

import io.github.tenantintegration.internal.Redact;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.ExpiringStorage;
import io.github.tenantintegration.tokenmanager.Lock;
import io.github.tenantintegration.tokenmanager.LockingStorage;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TakingStorage;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The token manager's records in Redis (or Valkey) and the Redis refresh lock, over Lettuce,
 * interchangeable with {@code @tenant-integration/token-store-redis} and the Python and Go kits' Redis
 * storages: the same keys, values, lease lock, scripts and release announcements ({@code
 * spec/token-store/README.md}), so that Java, Node, Python and Go processes sharing one Redis make one
 * refresh per expiry between them.
 *
 * <pre>{@code
 * RedisClient client = RedisClient.create(RedisStorage.clientResources(), "redis://127.0.0.1:6379");
 * client.setOptions(RedisStorage.clientOptions());   // never queue, never replay (see below)
 * // or a cluster: RedisClusterClient.create(RedisStorage.clientResources(), seeds), with RedisStorage.clusterClientOptions()
 * RedisStorage storage = RedisStorage.builder(client).prefix("billing-app:").build();
 * TokenManager manager = TokenManager.builder(...).storage(storage).build();
 * }</pre>
 *
 * <p>One string key per record, {@code <prefix>tenant-integration:{<origin>:<clientId>}:<kind>} ({@link
 * Keys#key}), without expiry, values never logged. A Lettuce client queues commands while it is
 * disconnected and replays them once it reconnects (lettuce#121, #508), and re-sends the commands that
 * were in flight when a connection dropped: a refresh protocol cannot live with that (a lock taken, or
 * old tokens written, long after the call that sent it failed). So the client must reject commands
 * while disconnected ({@code disconnectedBehavior(REJECT_COMMANDS)}, which also cancels the commands in
 * flight at a disconnection), and a cluster client must refresh its topology (periodic and adaptive
 * triggers) so that a failover is lived through: {@link #clientOptions()} and {@link
 * #clusterClientOptions()} give such options, and a client with others is refused ({@code
 * INVALID_OPTIONS}). Every command is bounded by the command timeout ({@code COMMAND_FAILED} after it).
 *
 * <p>Errors: {@code COMMAND_FAILED} (a command failed or got no reply in time; on a cluster the message
 * says when the cluster is down or a slot is moving; a key of another Redis type, WRONGTYPE, is named),
 * {@code UNEXPECTED_REPLY}, {@code REPLICATION_TIMEOUT}, {@code INVALID_OPTIONS}; the lock's {@code
 * LOCK_TIMEOUT}, and {@code STORAGE_FAILED} with {@code LOCK_UNAVAILABLE} as its cause when Redis fails
 * while the lock is taken. Messages name keys and commands, never a value. Immutable and thread-safe;
 * {@link #close()} closes its connection (not the client).
 */
public final class RedisStorage implements LockingStorage, ExpiringStorage, TakingStorage, AutoCloseable {
    /** The defaults, the other kits'. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(10);

    /** How long a wait for another holder of the lock lasts, then {@code LOCK_TIMEOUT}. */
    public static final Duration DEFAULT_WAIT_TIMEOUT = Duration.ofSeconds(45);

    /** The bound of each command's reply. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);

    static final ExecutorService WORKERS = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "tenant-integration-redis");
        thread.setDaemon(true);
        return thread;
    });

    final Connection connection;
    final Options options;
    private final RedisLock lock;

    /** The storage's and the lock's options. */
    record Options(
            String prefix,
            Duration lease,
            Duration renewEvery,
            Duration waitTimeout,
            Duration retryDelay,
            Duration maxRetryDelay,
            Duration commandTimeout,
            int replicas,
            Duration replicasTimeout,
            Consumer<TokenManagerException> onLeaseLost,
            System.Logger logger) {}

    private RedisStorage(Connection connection, Options options) {
        this.connection = connection;
        this.options = options;
        this.lock = new RedisLock(this);
    }

    /**
     * Client resources whose reconnections are tried 10 ms after a connection drops, then doubling up to
     * 1 s (Lettuce's default doubles up to 30 s: after a long outage, the first call would wait out the
     * next try). Give them to the client ({@code RedisClient.create(RedisStorage.clientResources(), uri)})
     * and shut them down with it.
     */
    public static ClientResources clientResources() {
        return clientResourcesBuilder().build();
    }

    /**
     * A builder of {@link #clientResources()}, to set more (e.g. {@code ioThreadPoolSize}) before {@code
     * build()}.
     */
    public static DefaultClientResources.Builder clientResourcesBuilder() {
        return DefaultClientResources.builder()
                .reconnectDelay(
                        Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS));
    }

    /** Options for a {@link RedisClient} the storage accepts: commands rejected while disconnected, never replayed, bounded. */
    public static ClientOptions clientOptions() {
        return ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .replayFilter(command -> true)
                .timeoutOptions(TimeoutOptions.enabled(DEFAULT_COMMAND_TIMEOUT))
                .socketOptions(SocketOptions.builder()
                        .connectTimeout(DEFAULT_COMMAND_TIMEOUT)
                        .keepAlive(true)
                        .build())
                .build();
    }

    /**
     * Options for a {@link RedisClusterClient} the storage accepts: those of {@link #clientOptions()}, and
     * the cluster's topology refreshed every 10 s and on every adaptive trigger (a MOVED or ASK
     * redirection, a persistent reconnect, an unknown node), so that a failover is followed.
     */
    public static ClusterClientOptions clusterClientOptions() {
        ClusterClientOptions.Builder builder = ClusterClientOptions.builder()
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(Duration.ofSeconds(10))
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(3))
                        .build());
        builder.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .replayFilter(command -> true)
                .timeoutOptions(TimeoutOptions.enabled(DEFAULT_COMMAND_TIMEOUT))
                .socketOptions(SocketOptions.builder()
                        .connectTimeout(DEFAULT_COMMAND_TIMEOUT)
                        .keepAlive(true)
                        .build());
        return builder.build();
    }

    /**
     * A builder of a storage on one Redis server (or Sentinel).
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} when the client would queue commands while
     *     disconnected
     */
    public static Builder builder(RedisClient client) {
        Objects.requireNonNull(client, "client");
        checkRejects(client.getOptions());
        return new Builder(() -> Connection.of(client));
    }

    /**
     * A builder of a storage on a Redis Cluster (reading from primaries only: a replica may not yet hold a
     * refresh token just rotated).
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} when the client would queue commands while
     *     disconnected, or does not refresh its topology
     */
    public static Builder builder(RedisClusterClient client) {
        Objects.requireNonNull(client, "client");
        checkRejects(client.getOptions());
        if (!(client.getOptions() instanceof ClusterClientOptions cluster)
                || !cluster.getTopologyRefreshOptions().isPeriodicRefreshEnabled()
                || cluster.getTopologyRefreshOptions()
                        .getAdaptiveRefreshTriggers()
                        .isEmpty()) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_OPTIONS,
                    "client: a RedisClusterClient must refresh its topology (periodic "
                            + "and adaptive triggers), or a failover leaves it sending to a dead primary: "
                            + "client.setOptions(RedisStorage.clusterClientOptions())");
        }
        return new Builder(() -> Connection.of(client));
    }

    private static void checkRejects(ClientOptions options) {
        if (options.getDisconnectedBehavior() != ClientOptions.DisconnectedBehavior.REJECT_COMMANDS) {
            throw new TokenManagerException(
                    ErrorCode.INVALID_OPTIONS,
                    "client: its options must reject commands while disconnected "
                            + "(disconnectedBehavior REJECT_COMMANDS): a Lettuce client otherwise queues them and replays them after it "
                            + "reconnects (lettuce#121, #508), which can take the refresh lock or write old tokens long after the call gave "
                            + "up: client.setOptions(RedisStorage.clientOptions())");
        }
    }

    /** The storage's Redis lock, which the manager uses unless its builder's {@code lock} gives another. */
    @Override
    public Lock lock() {
        return lock;
    }

    /** The Redis key of a name of the manager (see {@link Keys#key}). */
    public String key(String name) {
        return Keys.key(options.prefix(), name);
    }

    /** The Redis key a user finds with redis-cli, for the manager's messages (decision D3). */
    @Override
    public String where(String name) {
        return key(name);
    }

    /**
     * Sends a command and waits for its reply, at most the command timeout. While the connection is down
     * (Lettuce reconnects on its own schedule, and rejects commands meanwhile: they never leave), the
     * command is sent again every 20 ms until the bound, so that the first call after an outage finds the
     * connection back instead of failing.
     *
     * @throws StorageException {@code code} naming the command and the key
     */
    <T> T call(
            Supplier<? extends CompletionStage<T>> send,
            ErrorCode code,
            String command,
            String key,
            String... secrets) {
        long deadline = System.nanoTime() + options.commandTimeout().toNanos();
        while (true) {
            CompletableFuture<T> reply;
            try {
                reply = send.get().toCompletableFuture();
            } catch (RedisException e) {
                throw failed(code, command, key, e.getClass().getSimpleName() + ": " + e.getMessage(), secrets);
            }
            try {
                return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw failed(
                        code,
                        command,
                        key,
                        "no reply within " + options.commandTimeout().toMillis() + " ms",
                        secrets);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause() == null ? e : e.getCause();
                if (rejected(cause) && deadline - System.nanoTime() > RETRY_NANOS) {
                    pause();
                    continue;
                }
                throw failed(code, command, key, cause.getClass().getSimpleName() + ": " + cause.getMessage(), secrets);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TokenManagerException(
                        ErrorCode.ABORTED, "interrupted while waiting for Redis " + command + " of " + key);
            }
        }
    }

    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** Lettuce rejected the command while disconnected (REJECT_COMMANDS): it never left. */
    static boolean rejected(Throwable error) {
        return error instanceof RedisException
                && error.getMessage() != null
                && error.getMessage().startsWith("Currently not connected");
    }

    private static void pause() {
        try {
            TimeUnit.NANOSECONDS.sleep(RETRY_NANOS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for Redis to come back");
        }
    }

    /** The error of a command that failed: its name, its key and why, scrubbed of values. */
    static StorageException failed(ErrorCode code, String command, String key, String why, String... secrets) {
        String clean = Redact.text(why, List.of(secrets));
        String message = "Redis " + command + " of " + key + " failed (" + clean + ")";
        String hint = hint(clean, key);
        if (hint != null) message += ": " + hint;
        return new StorageException(code, key, message, null);
    }

    /** Why a Redis error happened, in words, for what a cluster answers and for a foreign value; null otherwise. */
    static String hint(String why, String key) {
        if (why.contains("WRONGTYPE")) {
            return "the key " + key
                    + " holds a value of another Redis type, which this kit did not write (another application's "
                    + "data?); nothing was deleted or overwritten";
        }
        if (why.contains("CLUSTERDOWN"))
            return "the Redis Cluster is down, or no node serves the key's slot (see CLUSTER INFO and CLUSTER NODES)";
        if (why.contains("MOVED ") || why.contains("ASK ") || why.contains("TRYAGAIN")) {
            return "the key's slot is moving between cluster nodes (resharding) and the redirects ran out: retry once the slot has settled";
        }
        return null;
    }

    /**
     * The value of {@code name} ({@code GET}).
     *
     * @throws StorageException {@code COMMAND_FAILED}
     */
    @Override
    public Optional<String> get(String name) {
        String key = key(name);
        return Optional.ofNullable(call(() -> connection.async.get(key), ErrorCode.COMMAND_FAILED, "GET", key));
    }

    /**
     * Stores {@code value} under {@code name} ({@code SET}; with replicas, then {@code WAIT} on the same
     * connection).
     *
     * @throws StorageException {@code COMMAND_FAILED}, {@code UNEXPECTED_REPLY}, {@code REPLICATION_TIMEOUT}
     */
    @Override
    public void set(String name, String value) {
        String key = key(name);
        String reply = write("SET", key, commands -> commands.set(key, value), value);
        if (!"OK".equals(reply)) {
            throw new StorageException(
                    ErrorCode.UNEXPECTED_REPLY, key, "SET of " + key + " was not acknowledged with OK", null);
        }
    }

    /**
     * Stores {@code value} under {@code name} for {@code lifetime} ({@code SET … PX}; with replicas, then
     * {@code WAIT}): a pending sign-in, dropped by Redis once its lifetime passed.
     *
     * @throws StorageException {@code COMMAND_FAILED}, {@code UNEXPECTED_REPLY}, {@code REPLICATION_TIMEOUT}
     */
    @Override
    public void setExpiring(String name, String value, Duration lifetime) {
        String key = key(name);
        long ms = Math.max(1, lifetime.toMillis());
        String reply = write("SET", key, commands -> commands.set(key, value, SetArgs.Builder.px(ms)), value);
        if (!"OK".equals(reply)) {
            throw new StorageException(
                    ErrorCode.UNEXPECTED_REPLY, key, "SET of " + key + " was not acknowledged with OK", null);
        }
    }

    /**
     * Reads and deletes {@code name} in one step ({@code GETDEL}, Redis 6.2; on an older server a script
     * of {@code GET} and {@code DEL}): of concurrent takes, in any processes, at most one gets the value.
     *
     * @throws StorageException {@code COMMAND_FAILED}
     */
    @Override
    public Optional<String> take(String name) {
        String key = key(name);
        try {
            return Optional.ofNullable(write("GETDEL", key, commands -> commands.getdel(key), null));
        } catch (StorageException e) {
            if (e.getMessage() == null
                    || !e.getMessage().toLowerCase(java.util.Locale.ROOT).contains("unknown command")) throw e;
        }
        return Optional.ofNullable(
                write("EVAL", key, commands -> commands.<String>eval(TAKE_SCRIPT, ScriptOutputType.VALUE, key), null));
    }

    /** {@code GETDEL} for a Redis before 6.2. */
    private static final String TAKE_SCRIPT =
            "local v = redis.call('GET', KEYS[1]) redis.call('DEL', KEYS[1]) return v";

    /**
     * Removes {@code name} ({@code DEL}; with replicas, then {@code WAIT}).
     *
     * @throws StorageException {@code COMMAND_FAILED}, {@code REPLICATION_TIMEOUT}
     */
    @Override
    public void delete(String name) {
        String key = key(name);
        write("DEL", key, commands -> commands.del(key), null);
    }

    /** One write, then with replicas {@code WAIT} on the write's own connection. */
    private <T> T write(
            String command,
            String key,
            Function<RedisClusterAsyncCommands<String, String>, CompletionStage<T>> send,
            String secret) {
        if (options.replicas() == 0)
            return call(() -> send.apply(connection.async), ErrorCode.COMMAND_FAILED, command, key, secretOf(secret));
        RedisClusterAsyncCommands<String, String> writer;
        try {
            writer = connection.writerOf(key);
        } catch (RedisException e) {
            throw failed(ErrorCode.COMMAND_FAILED, command, key, e.getMessage());
        }
        T reply = call(() -> send.apply(writer), ErrorCode.COMMAND_FAILED, command, key, secretOf(secret));
        Long acked = call(
                () -> writer.waitForReplication(
                        options.replicas(), options.replicasTimeout().toMillis()),
                ErrorCode.COMMAND_FAILED,
                "WAIT",
                key);
        if (acked == null || acked < options.replicas()) {
            throw new StorageException(
                    ErrorCode.REPLICATION_TIMEOUT,
                    key,
                    acked + " of " + options.replicas() + " replicas acknowledged the " + "write of " + key + " within "
                            + options.replicasTimeout().toMillis() + " ms",
                    null);
        }
        return reply;
    }

    private static String[] secretOf(String value) {
        return value == null ? new String[0] : new String[] {value};
    }

    /** Closes the storage's connection (the client stays open: it is the application's). */
    @Override
    public void close() {
        connection.close();
    }

    /** Its prefix and kind of Redis, never a value. */
    @Override
    public String toString() {
        return "RedisStorage[" + (connection.isCluster() ? "cluster" : "server") + ", prefix \"" + options.prefix()
                + "\"]";
    }

    /** The options of a {@link RedisStorage}; immutable: each method returns a new builder. */
    public static final class Builder {
        private final java.util.function.Supplier<Connection> connect;
        private String prefix = "";
        private Duration lease = DEFAULT_LEASE;
        private Duration renewEvery;
        private Duration waitTimeout = DEFAULT_WAIT_TIMEOUT;
        private Duration retryDelay = Duration.ofMillis(20);
        private Duration maxRetryDelay = Duration.ofMillis(500);
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private int replicas;
        private Duration replicasTimeout = Duration.ZERO;
        private Consumer<TokenManagerException> onLeaseLost;
        private System.Logger logger;

        private Builder(java.util.function.Supplier<Connection> connect) {
            this.connect = connect;
        }

        private Builder copy() {
            Builder b = new Builder(connect);
            b.prefix = prefix;
            b.lease = lease;
            b.renewEvery = renewEvery;
            b.waitTimeout = waitTimeout;
            b.retryDelay = retryDelay;
            b.maxRetryDelay = maxRetryDelay;
            b.commandTimeout = commandTimeout;
            b.replicas = replicas;
            b.replicasTimeout = replicasTimeout;
            b.onLeaseLost = onLeaseLost;
            b.logger = logger;
            return b;
        }

        /** Put before every key, e.g. {@code "myapp:"} in a shared Redis (default none); no {@code {} or {@code }}. */
        public Builder prefix(String prefix) {
            Keys.checkPrefix(prefix);
            Builder b = copy();
            b.prefix = prefix;
            return b;
        }

        /** How long a lease lasts without renewal (default 10 s): a holder that dies blocks the others at most this long. */
        public Builder lease(Duration lease) {
            Builder b = copy();
            b.lease = Objects.requireNonNull(lease, "lease");
            return b;
        }

        /** How often a running task's lease is renewed (default a third of the lease). */
        public Builder renewEvery(Duration every) {
            Builder b = copy();
            b.renewEvery = Objects.requireNonNull(every, "renewEvery");
            return b;
        }

        /** The bound of the wait for a lock another owner holds, then {@code LOCK_TIMEOUT} (default 45 s). */
        public Builder waitTimeout(Duration timeout) {
            Builder b = copy();
            b.waitTimeout = Objects.requireNonNull(timeout, "waitTimeout");
            return b;
        }

        /** The first and the longest pause between two tries while waiting (default 20 ms doubling to 500 ms, with jitter). */
        public Builder retryDelay(Duration first, Duration longest) {
            Builder b = copy();
            b.retryDelay = Objects.requireNonNull(first, "first");
            b.maxRetryDelay = Objects.requireNonNull(longest, "longest");
            return b;
        }

        /** The bound of each command's reply (default 5 s): a Redis that stops answering fails a call instead of blocking it. */
        public Builder commandTimeout(Duration timeout) {
            Builder b = copy();
            b.commandTimeout = Objects.requireNonNull(timeout, "commandTimeout");
            return b;
        }

        /**
         * After each write, wait until {@code count} replicas acknowledged it ({@code WAIT}, on the write's
         * own connection), at most {@code timeout}; fewer is {@code REPLICATION_TIMEOUT}. It narrows, and
         * does not close, the window in which a failover loses a rotated refresh token.
         */
        public Builder replicas(int count, Duration timeout) {
            Builder b = copy();
            b.replicas = count;
            b.replicasTimeout = Objects.requireNonNull(timeout, "timeout");
            return b;
        }

        /** Called with a {@code LEASE_LOST} error when a running task's lease was lost (default: a warning). */
        public Builder onLeaseLost(Consumer<TokenManagerException> listener) {
            Builder b = copy();
            b.onLeaseLost = Objects.requireNonNull(listener, "onLeaseLost");
            return b;
        }

        /** The logger of the lock's warnings (keys only, never a value). */
        public Builder logger(System.Logger logger) {
            Builder b = copy();
            b.logger = Objects.requireNonNull(logger, "logger");
            return b;
        }

        /**
         * The storage, with its connection opened.
         *
         * @throws TokenManagerException {@code INVALID_OPTIONS} for a bad duration; {@code COMMAND_FAILED}
         *     when Redis cannot be reached
         */
        public RedisStorage build() {
            Duration every = renewEvery != null ? renewEvery : lease.dividedBy(3);
            for (Duration d : List.of(lease, every, waitTimeout, retryDelay, maxRetryDelay, commandTimeout)) {
                if (d.isNegative() || d.isZero()) throw invalid("options", "every duration must be positive");
            }
            if (lease.toMillis() < 1) throw invalid("lease", "at least 1 ms (PX counts milliseconds)");
            if (every.compareTo(lease) >= 0) throw invalid("renewEvery", "must be less than the lease");
            if (replicas < 0 || (replicas > 0 && replicasTimeout.toMillis() < 1)) {
                throw invalid("replicas", "count >= 0 and a timeout of 1 ms or more (WAIT 0 would block forever)");
            }
            System.Logger log = logger != null ? logger : System.getLogger(RedisStorage.class.getName());
            Consumer<TokenManagerException> lost =
                    onLeaseLost != null ? onLeaseLost : e -> log.log(System.Logger.Level.WARNING, e.getMessage());
            Options options = new Options(
                    prefix,
                    lease,
                    every,
                    waitTimeout,
                    retryDelay,
                    maxRetryDelay,
                    commandTimeout,
                    replicas,
                    replicasTimeout,
                    lost,
                    log);
            Connection opened;
            try {
                opened = connect.get();
            } catch (RedisException e) {
                throw new StorageException(
                        ErrorCode.COMMAND_FAILED, null, "cannot connect to Redis (" + e.getMessage() + ")", null);
            }
            return new RedisStorage(opened, options);
        }

        private static TokenManagerException invalid(String option, String why) {
            return new TokenManagerException(ErrorCode.INVALID_OPTIONS, option + ": " + why);
        }
    }
}
