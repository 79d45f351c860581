package io.github.tenantintegration.postgresstorage;

import io.github.tenantintegration.postgresstorage.Rows.Row;
import io.github.tenantintegration.postgresstorage.Rows.Scope;
import io.github.tenantintegration.postgresstorage.Schema.Table;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.ExpiringStorage;
import io.github.tenantintegration.tokenmanager.Lock;
import io.github.tenantintegration.tokenmanager.LockingStorage;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TakingStorage;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.concurrent.Semaphore;
import javax.sql.DataSource;

/**
 * The token manager's records in PostgreSQL, one row each in the table every kit shares ({@code
 * spec/token-store/postgres/schema.sql}), and the PostgreSQL refresh lock that makes one refresh out of
 * many across every process (Java, TypeScript, Python or Go) sharing the database ({@code
 * spec/token-store/README.md}, "PostgreSQL: one table, and the refresh lock"). See RFC 6749 §6, §10.4
 * and RFC 9700 §4.14.2 (refresh token rotation).
 *
 * <pre>{@code
 * HikariDataSource dataSource = new HikariDataSource(config);          // the application's pool
 * PostgresStorage.ensureSchema(dataSource);                           // or apply schemaSql() with your migrations
 * PostgresStorage storage = PostgresStorage.builder(dataSource, "https://acme.tenant.test", "demo").build();
 * TokenManager manager = TokenManager.builder("https://acme.tenant.test", "demo", redirectUri)
 *         .storage(storage).build();
 * }</pre>
 *
 * <p>Over the application's {@link DataSource} (a pool such as HikariCP): the storage checks connections
 * out of it and gives them back, and never opens a pool of its own. Each {@link #get}, {@link #set},
 * {@link #delete}, {@link #setExpiring} and {@link #take} is one autocommitted statement on a connection
 * of its own, bounded by the command timeout for the checkout and again for the answer ({@link
 * Connection#setNetworkTimeout}: a server that stops answering costs a call the command timeout, and the
 * connection is closed, never lent again). The storage is made for one tenant origin and client id, the
 * manager's (a client id may hold {@code :}, so a record's name alone does not say where it ends).
 *
 * <p>At its first use it checks the table: {@code SCHEMA_MISSING} (apply the schema, or call {@link
 * #ensureSchema}), {@code SCHEMA_MISMATCH} (another version's or application's table: nothing is
 * written), {@code READ_ONLY} (a hot standby or a read-only server given as the primary); a check that
 * failed is made again at the next call, so a migration applied while the application runs is taken
 * without a restart. It never runs DDL unless {@link #ensureSchema} is called. Later failures:
 * {@code COMMAND_FAILED} (the message names the statement, the row as a condition to paste into a
 * query, and why: the connection lost, no answer, {@code statement_timeout}…), {@code UNKNOWN_NAME};
 * never a value: the driver's error is reduced to its first line (pgjdbc adds the server's {@code
 * Detail}, which can quote a row). The token manager reports each as {@code STORAGE_FAILED} with it as
 * the cause. Immutable and thread-safe.
 */
public final class PostgresStorage implements LockingStorage, ExpiringStorage, TakingStorage {
    /** The bound of each statement's checkout, and again of its answer (the other kits' 5 s). */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);

    /** How long a wait for another holder of the lock lasts, then {@code LOCK_TIMEOUT}. */
    public static final Duration DEFAULT_WAIT_TIMEOUT = Duration.ofSeconds(45);

    /** How long each wait blocks in the server ({@code lock_timeout}) before {@code until} is asked. */
    public static final Duration DEFAULT_WAIT_SLICE = Duration.ofMillis(250);

    /** The table every kit uses unless told another. */
    public static final String DEFAULT_TABLE = Schema.DEFAULT_TABLE;

    /** The table's comment, which says which version of the shared schema it is. */
    public static final String SCHEMA_VERSION = Schema.VERSION;

    /** The connections the locks of this process may hold, per DataSource: shared by every storage on it. */
    private static final Map<DataSource, Semaphore> SLOTS = Collections.synchronizedMap(new WeakHashMap<>());

    // The statements, with the table as {table} and the row's key first: session, origin, client id, kind
    // (the primary key's order). The same SQL as the TypeScript, Python and Go storages.
    private static final String KEY = "session = ? AND origin = ? AND client_id = ? AND kind = ?";
    private static final String GET =
            "SELECT value FROM {table} WHERE " + KEY + " AND (expires_at IS NULL OR expires_at > now())";
    private static final String UPSERT = " ON CONFLICT (session, origin, client_id, kind)"
            + " DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, updated_at = excluded.updated_at";
    private static final String SET = "INSERT INTO {table} AS t (session, origin, client_id, kind, value, expires_at,"
            + " updated_at) VALUES (?, ?, ?, ?, ?, NULL, now())" + UPSERT;
    /** The upsert with an expiry, and the clean-up of at most 100 expired rows of others through the index. */
    private static final String SET_EXPIRING = "WITH expired AS (DELETE FROM {table} WHERE (session, origin,"
            + " client_id, kind) IN (SELECT session, origin, client_id, kind FROM {table} WHERE expires_at <= now()"
            + " AND NOT (" + KEY + ") ORDER BY expires_at LIMIT 100 FOR UPDATE SKIP LOCKED))"
            + " INSERT INTO {table} AS t (session, origin, client_id, kind, value, expires_at, updated_at)"
            + " VALUES (?, ?, ?, ?, ?, now() + ? * interval '1 millisecond', now())" + UPSERT;

    private static final String TAKE =
            "DELETE FROM {table} WHERE " + KEY + " RETURNING value, (expires_at IS NULL OR expires_at > now())";
    private static final String DELETE = "DELETE FROM {table} WHERE " + KEY;

    final DataSource dataSource;
    final Options options;
    final Semaphore slots;
    private final Table table;
    private final Scope scope;
    private final PostgresLock lock;
    private volatile boolean checked;

    /** The storage's and the lock's options. */
    record Options(
            Duration commandTimeout,
            Duration waitTimeout,
            Duration waitSlice,
            int maxLockConnections,
            Keepalives keepalives) {}

    private PostgresStorage(DataSource dataSource, Table table, Scope scope, Options options) {
        this.dataSource = dataSource;
        this.table = table;
        this.scope = scope;
        this.options = options;
        this.slots = SLOTS.computeIfAbsent(dataSource, d -> new Semaphore(options.maxLockConnections()));
        this.lock = new PostgresLock(this);
    }

    /**
     * A builder of a storage on {@code dataSource} for the manager of {@code baseUrl} and {@code clientId}.
     *
     * @param dataSource the application's DataSource of the primary (a pool: at least 2 connections, a
     *     refresh holds one for its lock and writes on another)
     * @param baseUrl the manager's base URL (its origin names the rows)
     * @param clientId the manager's client id
     * @throws TokenManagerException {@code INVALID_OPTIONS} for a base URL the manager would refuse, or an
     *     empty client id
     */
    public static Builder builder(DataSource dataSource, String baseUrl, String clientId) {
        Objects.requireNonNull(dataSource, "dataSource");
        String origin = TokenManager.tenantOrigin(baseUrl);
        if (clientId == null || clientId.isEmpty())
            throw invalid("clientId", "must be the manager's client id, a non-empty string");
        return new Builder(dataSource, new Scope(origin, clientId));
    }

    /**
     * The DDL of the default table (version {@link #SCHEMA_VERSION}): exactly {@code
     * spec/token-store/postgres/schema.sql}, every kit's. Give it to your migrations.
     */
    public static String schemaSql() {
        return schemaSql(DEFAULT_TABLE);
    }

    /**
     * The DDL of the table {@code table} ({@code name} or {@code schema.name}): what {@link #ensureSchema}
     * runs, and what to give your migrations.
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} for another form of name
     */
    public static String schemaSql(String table) {
        return Schema.ddl(Table.parse(table));
    }

    /** {@link #ensureSchema(DataSource, String, Duration)} of the default table, within 5 s. */
    public static boolean ensureSchema(DataSource dataSource) {
        return ensureSchema(dataSource, DEFAULT_TABLE, DEFAULT_COMMAND_TIMEOUT);
    }

    /**
     * Creates the table ({@link #schemaSql(String)}) when it does not exist, in one transaction, under an
     * advisory lock so that processes starting together do not race in the catalog; does nothing when the
     * table is this version. The only DDL the kit ever runs, and only when called.
     *
     * @return whether it created the table
     * @throws StorageException {@code SCHEMA_MISMATCH} (nothing changed) for a table of that name that is
     *     not this version; {@code READ_ONLY} on a standby or read-only server; {@code COMMAND_FAILED} when
     *     the DDL failed (42501: the role may not create tables) or the server did not answer in time
     */
    public static boolean ensureSchema(DataSource dataSource, String table, Duration timeout) {
        Objects.requireNonNull(dataSource, "dataSource");
        positive("timeout", timeout);
        return Schema.ensure(dataSource, Table.parse(table), timeout);
    }

    /** The PostgreSQL lock, which the manager uses unless its builder's {@code lock} gives another. */
    @Override
    public Lock lock() {
        return lock;
    }

    /**
     * The row of the manager's record {@code name} as a condition a user can paste into a query, which
     * the manager names in its messages (decision D3), e.g. {@code tenant_integration_records (origin,
     * client_id, session, kind) = ('https://acme.tenant.test', 'demo', '', 'tokens')}.
     */
    @Override
    public String where(String name) {
        try {
            return scope.row(name).describe(table.text());
        } catch (StorageException e) {
            return name;
        }
    }

    private List<String[]> statement(String name, String verb, String template, List<Object> params) {
        Row row = scope.row(name);
        checkSchema();
        List<Object> all = new ArrayList<>(row.params());
        all.addAll(params);
        String sql = template.replace("{table}", table.quoted());
        return Pool.run(dataSource, sql, all, options.commandTimeout(), verb + " of " + row.describe(table.text()));
    }

    /** The first-use check, once it passed; one that failed is made again at the next call. */
    private void checkSchema() {
        if (checked) return;
        String what = "the check of the table " + table.text();
        Connection connection = Pool.checkOut(dataSource, options.commandTimeout(), what, ErrorCode.COMMAND_FAILED);
        StorageException refused;
        try {
            refused = Schema.inspect(connection, table, options.commandTimeout(), what);
            Pool.giveBack(connection);
        } catch (RuntimeException e) {
            Pool.dropIfBroken(connection, e);
            throw e;
        }
        if (refused != null) throw refused;
        checked = true;
    }

    /**
     * {@code SELECT} of the row of {@code name}: its value, or empty when absent (an expired row reads as
     * absent).
     *
     * @throws StorageException {@code UNKNOWN_NAME}, {@code SCHEMA_MISSING}, {@code SCHEMA_MISMATCH},
     *     {@code READ_ONLY}, {@code COMMAND_FAILED}
     */
    @Override
    public Optional<String> get(String name) {
        List<String[]> rows = statement(name, "SELECT", GET, List.of());
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0)[0]);
    }

    /**
     * Stores {@code value} under {@code name} ({@code INSERT … ON CONFLICT DO UPDATE}), committed when it
     * returns.
     *
     * @throws StorageException as {@link #get}
     */
    @Override
    public void set(String name, String value) {
        Objects.requireNonNull(value, "value");
        statement(name, "INSERT", SET, List.of(value));
    }

    /**
     * Stores {@code value} under {@code name} to be dropped once {@code lifetime} passed (by the server's
     * clock): a pending sign-in. Expired rows read as absent; up to 100 of them (others', never this one)
     * are deleted by the same statement through the {@code expires_at} index, never a scan, skipping rows
     * another statement holds.
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} for a lifetime under a millisecond
     * @throws StorageException as {@link #get}
     */
    @Override
    public void setExpiring(String name, String value, Duration lifetime) {
        Objects.requireNonNull(value, "value");
        if (lifetime == null || lifetime.toMillis() < 1) throw invalid("lifetime", "must be at least 1 ms");
        Row row = scope.row(name);
        List<Object> params = new ArrayList<>(row.params());
        params.add(value);
        params.add(lifetime.toMillis());
        statement(name, "INSERT", SET_EXPIRING, params);
    }

    /**
     * Returns the value of {@code name} and deletes it in one statement ({@code DELETE … RETURNING}): of
     * any number of concurrent takes, in any processes, at most one gets it; empty when absent (an expired
     * row is deleted and reads as absent).
     *
     * @throws StorageException as {@link #get}
     */
    @Override
    public Optional<String> take(String name) {
        List<String[]> rows = statement(name, "DELETE", TAKE, List.of());
        return rows.isEmpty() || !"t".equals(rows.get(0)[1]) ? Optional.empty() : Optional.of(rows.get(0)[0]);
    }

    /**
     * {@code DELETE} of the row of {@code name}; succeeds when absent.
     *
     * @throws StorageException as {@link #get}
     */
    @Override
    public void delete(String name) {
        statement(name, "DELETE", DELETE, List.of());
    }

    /** The table's name as given. */
    String tableText() {
        return table.text();
    }

    /** Its table, tenant and client, never a value. */
    @Override
    public String toString() {
        return "PostgresStorage[table " + table.text() + ", " + scope.origin() + ", client \"" + scope.clientId()
                + "\"]";
    }

    private static TokenManagerException invalid(String option, String why) {
        return new TokenManagerException(ErrorCode.INVALID_OPTIONS, option + ": " + why);
    }

    private static void positive(String option, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) throw invalid(option, "must be a positive duration");
    }

    /**
     * The size of a pool the storage recognises (HikariCP's {@code getMaximumPoolSize}, DBCP's {@code
     * getMaxTotal}, c3p0's {@code getMaxPoolSize}), or 0 when unknown.
     */
    static int poolSize(DataSource dataSource) {
        for (String getter : List.of("getMaximumPoolSize", "getMaxTotal", "getMaxPoolSize")) {
            try {
                Method method = dataSource.getClass().getMethod(getter);
                Object size = method.invoke(dataSource);
                if (size instanceof Integer n) return n;
            } catch (ReflectiveOperationException | RuntimeException e) {
                // Not this pool.
            }
        }
        return 0;
    }

    /** The options of a {@link PostgresStorage}; immutable: each method returns a new builder. */
    public static final class Builder {
        private final DataSource dataSource;
        private final Scope scope;
        private String table = DEFAULT_TABLE;
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private Duration waitTimeout = DEFAULT_WAIT_TIMEOUT;
        private Duration waitSlice = DEFAULT_WAIT_SLICE;
        private int maxLockConnections;
        private Keepalives keepalives = Keepalives.DEFAULT;

        private Builder(DataSource dataSource, Scope scope) {
            this.dataSource = dataSource;
            this.scope = scope;
        }

        private Builder copy() {
            Builder b = new Builder(dataSource, scope);
            b.table = table;
            b.commandTimeout = commandTimeout;
            b.waitTimeout = waitTimeout;
            b.waitSlice = waitSlice;
            b.maxLockConnections = maxLockConnections;
            b.keepalives = keepalives;
            return b;
        }

        /** The table, {@code name} or {@code schema.name} (default {@code tenant_integration_records}). */
        public Builder table(String table) {
            Table.parse(table);
            Builder b = copy();
            b.table = table;
            return b;
        }

        /** The bound of each statement's checkout, and again of its answer (default 5 s). */
        public Builder commandTimeout(Duration timeout) {
            positive("commandTimeout", timeout);
            Builder b = copy();
            b.commandTimeout = timeout;
            return b;
        }

        /** The bound of the wait for a lock another process holds, then {@code LOCK_TIMEOUT} (default 45 s). */
        public Builder waitTimeout(Duration timeout) {
            positive("waitTimeout", timeout);
            Builder b = copy();
            b.waitTimeout = timeout;
            return b;
        }

        /** How long each wait blocks in the server before the manager's check runs (default 250 ms, at least 1 ms). */
        public Builder waitSlice(Duration slice) {
            positive("waitSlice", slice);
            if (slice.toMillis() < 1) throw invalid("waitSlice", "must be at least 1 ms");
            Builder b = copy();
            b.waitSlice = slice;
            return b;
        }

        /**
         * How many of the DataSource's connections this process's locks may hold at once (default: the
         * pool's size less one for HikariCP, DBCP and c3p0; 9 for a DataSource whose size is unknown, below
         * HikariCP's default of 10): a refresh holds one connection for its lock and writes on another, so
         * locks holding every connection would wait for each other forever.
         */
        public Builder maxLockConnections(int count) {
            if (count < 1) throw invalid("maxLockConnections", "must be at least 1");
            Builder b = copy();
            b.maxLockConnections = count;
            return b;
        }

        /** The server's TCP keepalives for the lock's transaction (default {@link Keepalives#DEFAULT}; null: the server's own). */
        public Builder keepalives(Keepalives keepalives) {
            Builder b = copy();
            b.keepalives = keepalives;
            return b;
        }

        /**
         * The storage. Nothing is read or written until its first call.
         *
         * @throws TokenManagerException {@code INVALID_OPTIONS} for a pool of one connection, or {@code
         *     maxLockConnections} not below the pool's size
         */
        public PostgresStorage build() {
            int size = poolSize(dataSource);
            int limit = maxLockConnections > 0 ? maxLockConnections : size > 0 ? size - 1 : 9;
            if (size > 0 && (limit < 1 || limit >= size)) {
                throw invalid(
                        "maxLockConnections",
                        "must be from 1 to the pool's size less one (its size is " + size
                                + "): a refresh holds one connection for its lock and writes the tokens on another");
            }
            Options options = new Options(commandTimeout, waitTimeout, waitSlice, limit, keepalives);
            return new PostgresStorage(dataSource, Table.parse(table), scope, options);
        }
    }
}
