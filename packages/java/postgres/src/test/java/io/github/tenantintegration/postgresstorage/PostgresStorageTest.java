package io.github.tenantintegration.postgresstorage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.LockWaitEndedException;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import io.github.tenantintegration.tokenmanager.WaitingLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The storage, its table check and its lock against a real PostgreSQL, shared by the tests (a table each). */
class PostgresStorageTest {
    static final String BASE = "https://acme.tenant.test";
    static final String CLIENT = "urn:app:1";
    static final String PREFIX = "tenant-integration:" + BASE + ":" + CLIENT + ":";

    static PostgresServer server;
    static DataSource data;
    static final AtomicInteger TABLES = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        server = PostgresServer.start();
        data = server.dataSource();
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) server.close();
    }

    /** A new table of the schema, and a storage on it. */
    static PostgresStorage.Builder fresh() {
        String table = "t" + TABLES.incrementAndGet();
        assertTrue(PostgresStorage.ensureSchema(data, table, Duration.ofSeconds(5)));
        return PostgresStorage.builder(data, BASE, CLIENT).table(table);
    }

    static StorageException storageError(ErrorCode code, Runnable call) {
        StorageException e = assertThrows(StorageException.class, call::run);
        assertEquals(code, e.code(), e.getMessage());
        return e;
    }

    static List<List<String>> rows(String sql) throws Exception {
        List<List<String>> rows = new ArrayList<>();
        try (Connection c = data.getConnection();
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery(sql)) {
            int n = r.getMetaData().getColumnCount();
            while (r.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 1; i <= n; i++) row.add(r.getString(i));
                rows.add(row);
            }
        }
        return rows;
    }

    @Test
    void theSchemaIsTheSharedFileByteForByte() throws Exception {
        Path shared = Path.of("../../../spec/token-store/postgres/schema.sql");
        assertEquals(Files.readString(shared), PostgresStorage.schemaSql());
        assertTrue(PostgresStorage.schemaSql("billing.tokens").contains("CREATE TABLE \"billing\".\"tokens\" ("));
        assertTrue(PostgresStorage.schemaSql("billing.tokens").contains("CONSTRAINT \"tokens_pkey\""));
        TokenManagerException e =
                assertThrows(TokenManagerException.class, () -> PostgresStorage.schemaSql("Tokens; DROP TABLE x"));
        assertEquals(ErrorCode.INVALID_OPTIONS, e.code());
    }

    @Test
    void eachNameIsItsRowAndOtherNamesAreRefused() {
        PostgresStorage storage = PostgresStorage.builder(data, BASE, CLIENT).build();
        String table = "tenant_integration_records (origin, client_id, session, kind) = ";
        assertEquals(
                table + "('https://acme.tenant.test', 'urn:app:1', '', 'tokens')", storage.where(PREFIX + "tokens"));
        assertEquals(
                table + "('https://acme.tenant.test', 'urn:app:1', 'auth0|42', 'intent')",
                storage.where(PREFIX + "auth0|42:intent"));
        String pending = "pending:" + "0123456789abcdef".repeat(2);
        assertEquals(
                table + "('https://acme.tenant.test', 'urn:app:1', '', '" + pending + "')",
                storage.where(PREFIX + pending));
        storageError(ErrorCode.UNKNOWN_NAME, () -> storage.get(PREFIX + "lock"));
        storageError(
                ErrorCode.UNKNOWN_NAME, () -> storage.get("tenant-integration:https://other.test:urn:app:1:tokens"));
        storageError(ErrorCode.UNKNOWN_NAME, () -> storage.get(PREFIX + "42:pending"));
    }

    @Test
    void aMissingTableIsSchemaMissingUntilEnsureSchemaCreatesIt() throws Exception {
        String table = "missing_" + TABLES.incrementAndGet();
        PostgresStorage storage =
                PostgresStorage.builder(data, BASE, CLIENT).table(table).build();
        StorageException e = storageError(ErrorCode.SCHEMA_MISSING, () -> storage.get(PREFIX + "tokens"));
        assertTrue(e.getMessage().contains("the table " + table + " does not exist"), e.getMessage());
        assertTrue(e.getMessage().contains("ensureSchema"), e.getMessage());
        // Nothing was created behind the user's back.
        assertEquals(List.of(List.of("f")), rows("SELECT to_regclass('" + table + "') IS NOT NULL"));
        assertTrue(PostgresStorage.ensureSchema(data, table, Duration.ofSeconds(5)));
        assertFalse(PostgresStorage.ensureSchema(data, table, Duration.ofSeconds(5)));
        // The failed check is made again: the same storage works now, without a restart.
        storage.set(PREFIX + "tokens", "{\"a\":1}");
        assertEquals(Optional.of("{\"a\":1}"), storage.get(PREFIX + "tokens"));
    }

    @Test
    void anotherVersionsTableIsSchemaMismatchAndNothingIsWritten() throws Exception {
        String table = "other_" + TABLES.incrementAndGet();
        server.sql(PostgresStorage.schemaSql(table));
        server.sql("COMMENT ON TABLE " + table + " IS 'tenant-integration token store v2'");
        PostgresStorage storage =
                PostgresStorage.builder(data, BASE, CLIENT).table(table).build();
        StorageException e = storageError(ErrorCode.SCHEMA_MISMATCH, () -> storage.set(PREFIX + "tokens", "{}"));
        assertTrue(e.getMessage().contains("tenant-integration token store v2"), e.getMessage());
        storageError(ErrorCode.SCHEMA_MISMATCH, () -> PostgresStorage.ensureSchema(data, table, Duration.ofSeconds(5)));
        assertEquals(List.of(List.of("0")), rows("SELECT count(*) FROM " + table));
        // A table whose columns are not the kit's, found by a later statement's SQLSTATE.
        String bare = "bare_" + TABLES.incrementAndGet();
        server.sql("CREATE TABLE " + bare + " (origin text, client_id text, session text, kind text)");
        server.sql("COMMENT ON TABLE " + bare + " IS 'tenant-integration token store v1'");
        PostgresStorage wrong =
                PostgresStorage.builder(data, BASE, CLIENT).table(bare).build();
        storageError(ErrorCode.SCHEMA_MISMATCH, () -> wrong.get(PREFIX + "tokens"));
    }

    @Test
    void aReadOnlyServerIsReadOnlyForTheStorageAndTheLock() throws Exception {
        PostgresStorage.Builder writable = fresh();
        DataSource readOnly = server.dataSource("options=-c%20default_transaction_read_only%3Don");
        PostgresStorage storage = PostgresStorage.builder(readOnly, BASE, CLIENT)
                .table(writable.build().tableText())
                .build();
        StorageException e = storageError(ErrorCode.READ_ONLY, () -> storage.get(PREFIX + "tokens"));
        assertTrue(e.getMessage().contains("default_transaction_read_only"), e.getMessage());
        StorageException lock =
                storageError(ErrorCode.READ_ONLY, () -> storage.lock().withLock(PREFIX + "lock", held -> "ran"));
        assertTrue(lock.getMessage().contains("coordinate nobody"), lock.getMessage());
    }

    @Test
    void recordsAreRowsOfTheSharedLayout() throws Exception {
        PostgresStorage storage = fresh().build();
        String table = storage.tableText();
        storage.set(PREFIX + "tokens", "{\"b\":2,\"a\":1}");
        storage.set(PREFIX + "ada@example.com:tokens", "{\"s\":1}");
        storage.set(PREFIX + "tokens", "{\"b\":3,\"a\":1}");
        assertEquals(
                List.of(
                        List.of("", BASE, CLIENT, "tokens", "{\"b\":3,\"a\":1}"),
                        List.of("ada@example.com", BASE, CLIENT, "tokens", "{\"s\":1}")),
                rows("SELECT session, origin, client_id, kind, value FROM " + table + " ORDER BY session"));
        storage.delete(PREFIX + "tokens");
        storage.delete(PREFIX + "tokens");
        assertEquals(Optional.empty(), storage.get(PREFIX + "tokens"));
        assertEquals(Optional.of("{\"s\":1}"), storage.get(PREFIX + "ada@example.com:tokens"));
    }

    @Test
    void aPendingSignInIsTakenOnceAndExpires() throws Exception {
        PostgresStorage storage = fresh().build();
        String name = PREFIX + "pending:" + "ab".repeat(16);
        storage.setExpiring(name, "{\"p\":1}", Duration.ofMinutes(10));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Optional<String>>> takes = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            takes.add(pool.submit(() -> {
                go.await();
                return storage.take(name);
            }));
        }
        go.countDown();
        int won = 0;
        for (Future<Optional<String>> take : takes) if (take.get().isPresent()) won++;
        pool.shutdown();
        assertEquals(1, won);
        storage.setExpiring(name, "{\"p\":2}", Duration.ofMillis(50));
        Thread.sleep(200);
        assertEquals(Optional.empty(), storage.get(name));
        assertEquals(Optional.empty(), storage.take(name));
        // An expired row of another sign-in is dropped by the next setExpiring.
        String other = PREFIX + "pending:" + "cd".repeat(16);
        storage.setExpiring(other, "{\"p\":3}", Duration.ofMillis(1));
        Thread.sleep(50);
        storage.setExpiring(name, "{\"p\":4}", Duration.ofMinutes(1));
        String table = storage.tableText();
        assertEquals(List.of(List.of("pending:" + "ab".repeat(16))), rows("SELECT kind FROM " + table));
        assertThrows(TokenManagerException.class, () -> storage.setExpiring(name, "{}", Duration.ZERO));
    }

    @Test
    void aHeldLockMakesAWaiterTimeOutNamingTheHolderAndReleasesItAtTheEnd() throws Exception {
        PostgresStorage.Builder builder = fresh();
        PostgresStorage holder = builder.build();
        PostgresStorage waiter = builder.waitTimeout(Duration.ofMillis(700)).build();
        String lock = PREFIX + "lock";
        CountDownLatch taken = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        Future<String> holding = pool.submit(() -> holder.lock().withLock(lock, held -> {
            taken.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return held.isHeld() ? "held" : "lost";
        }));
        taken.await();
        StorageException e =
                storageError(ErrorCode.LOCK_TIMEOUT, () -> waiter.lock().withLock(lock, held -> "no"));
        assertTrue(e.getMessage().contains("by the server process"), e.getMessage());
        assertTrue(e.getMessage().contains("application_name \"java-test\""), e.getMessage());
        // The until check ends a wait at once.
        assertThrows(
                LockWaitEndedException.class,
                () -> ((WaitingLock) waiter.lock()).withLockUntil(lock, () -> true, held -> "no"));
        // A release wakes the waiter: it gets the lock well within its bound.
        Future<String> second = Executors.newSingleThreadExecutor()
                .submit(() -> builder.waitTimeout(Duration.ofSeconds(20))
                        .build()
                        .lock()
                        .withLock(lock, held -> "second"));
        Thread.sleep(300);
        release.countDown();
        assertEquals("held", holding.get());
        assertEquals("second", second.get());
        pool.shutdown();
    }

    @Test
    void aHolderWhoseConnectionDropsMidRefreshFindsTheLockGoneAndAnotherTakesIt() throws Exception {
        PostgresStorage.Builder builder = fresh();
        PostgresStorage storage = builder.build();
        String lock = PREFIX + "lock";
        String after = storage.lock().withLock(lock, held -> {
            assertTrue(held.isHeld());
            try {
                server.sql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
                        + " AND mode = 'ExclusiveLock' AND granted");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            boolean stillHeld = held.isHeld();
            // The server released it with the connection: another takes it at once.
            String other =
                    builder.waitTimeout(Duration.ofSeconds(2)).build().lock().withLock(lock, h -> "other");
            return stillHeld + " " + other;
        });
        assertEquals("false other", after);
        // The storage goes on with new connections.
        storage.set(PREFIX + "tokens", "{}");
        assertEquals(Optional.of("{}"), storage.get(PREFIX + "tokens"));
    }

    @Test
    void aStatementTimeoutIsCommandFailedSayingSo() throws Exception {
        PostgresStorage storage = fresh().build();
        String table = storage.tableText();
        storage.set(PREFIX + "tokens", "{}");
        PostgresStorage limited = PostgresStorage.builder(
                        server.dataSource("options=-c%20statement_timeout%3D300"), BASE, CLIENT)
                .table(table)
                .build();
        try (Connection blocker = data.getConnection();
                Statement s = blocker.createStatement()) {
            blocker.setAutoCommit(false);
            s.execute("SELECT * FROM " + table + " FOR UPDATE");
            StorageException e =
                    storageError(ErrorCode.COMMAND_FAILED, () -> limited.set(PREFIX + "tokens", "{\"x\":1}"));
            assertTrue(e.getMessage().contains("statement_timeout"), e.getMessage());
            assertTrue(e.getMessage().contains("57014"), e.getMessage());
            assertTrue(
                    e.getMessage().contains("INSERT of " + table + " (origin, client_id, session, kind)"),
                    e.getMessage());
            blocker.rollback();
        }
        assertEquals(Optional.of("{}"), storage.get(PREFIX + "tokens"));
    }

    @Test
    void aDriversDetailQuotingARowNeverReachesTheError() throws Exception {
        PostgresStorage storage = fresh().build();
        String table = storage.tableText();
        server.sql("ALTER TABLE " + table + " ADD CONSTRAINT no_secret CHECK (value NOT LIKE '%SECRET%')");
        String secret = "rt_SECRET_abcdefghijklmnop";
        StorageException e = storageError(ErrorCode.COMMAND_FAILED, () -> storage.set(PREFIX + "tokens", secret));
        for (Throwable t = e; t != null; t = t.getCause()) {
            assertFalse(String.valueOf(t.getMessage()).contains("SECRET"), t.getMessage());
            assertFalse(t.toString().contains("SECRET"), t.toString());
        }
        assertTrue(e.getMessage().contains("23514"), e.getMessage());
        assertFalse(storage.toString().contains("SECRET"));
    }
}
