package io.github.tenantintegration.postgresstorage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.tenanttest.Fleets;
import io.github.tenantintegration.tenanttest.Sandbox;
import io.github.tenantintegration.tenanttest.TestTenant;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.Sessions;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Token managers and the sessions of a server on one PostgreSQL, each on a DataSource of its own as
 * processes would be; the server's faults, and a hot standby given as the primary.
 */
@Tag("process")
class PostgresManagersTest {
    static PostgresServer server;
    static Sandbox sandbox;
    static final java.util.concurrent.atomic.AtomicInteger TABLES = new java.util.concurrent.atomic.AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        server = PostgresServer.start();
        sandbox = Sandbox.start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (sandbox != null) sandbox.close();
        if (server != null) server.close();
    }

    /** A builder of a storage on a new table of its own, on a DataSource of its own. */
    static PostgresStorage.Builder storage(String table) throws Exception {
        PostgresStorage.ensureSchema(server.dataSource(), table, Duration.ofSeconds(5));
        return PostgresStorage.builder(
                        server.dataSource(),
                        sandbox.url(),
                        sandbox.clients().get(0).id())
                .table(table);
    }

    @Test
    void fiveManagersAfterExpiryMakeOneRefreshAndPresentNoTokenTwice() throws Exception {
        String table = "m" + TABLES.incrementAndGet();
        List<TestTenant> tenants = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            PostgresStorage storage = storage(table).build();
            tenants.add(TestTenant.create(sandbox, builder -> builder.storage(storage), i == 0));
        }
        Fleets.oneRefreshAfterExpiry(tenants);
    }

    @Test
    void sessionsOfThreeProcessesCompleteEachOthersSignInsAndRefreshEachSessionOncePerExpiry() throws Exception {
        String table = "m" + TABLES.incrementAndGet();
        PostgresStorage.ensureSchema(server.dataSource(), table, Duration.ofSeconds(5));
        Sandbox.Client registered = sandbox.clients().get(0);
        // Two processes, each on a DataSource of its own, and a second registry on the first one's pool.
        DataSource first = server.dataSource();
        List<DataSource> pools = List.of(first, server.dataSource(), first);
        List<Sessions> processes = new ArrayList<>();
        for (DataSource pool : pools) {
            PostgresStorage storage = PostgresStorage.builder(pool, sandbox.url(), registered.id())
                    .table(table)
                    .build();
            processes.add(Sessions.builder(TokenManager.builder(
                                    sandbox.url(),
                                    registered.id(),
                                    registered.redirectUris().get(0))
                            .scopes(Scope.PROFILE_READ)
                            .clock(sandbox.clock())
                            .storage(storage))
                    .build());
        }
        List<String> ids = List.of("ada@example.org", "42", "auth0|64f1c2a9e1b7");
        // Begun on one process, completed on another, in the reverse order.
        List<Sessions.Started> started = new ArrayList<>();
        for (String id : ids) started.add(processes.get(0).beginSignIn(id, null));
        for (int i = ids.size() - 1; i >= 0; i--) {
            Sessions.Started s = started.get(i);
            processes
                    .get(1)
                    .completeSignIn(
                            new Sessions.Callback(TestTenant.approve(s.request().url()), s.binding(), s.sessionId()));
        }
        assertEquals(
                List.of("42", "ada@example.org", "auth0|64f1c2a9e1b7"),
                column("SELECT session FROM " + table + " WHERE kind = 'tokens' ORDER BY session"),
                "a tokens row per session, none without one");
        assertEquals(List.of(), column("SELECT kind FROM " + table + " WHERE kind LIKE 'pending:%'"));

        sandbox.advance(Duration.ofMinutes(16));
        long before = sandbox.lastSeq();
        ExecutorService threads = Executors.newFixedThreadPool(9);
        List<Future<String>> calls = new ArrayList<>();
        try {
            for (Sessions process : processes)
                for (String id : ids) calls.add(threads.submit(() -> process.accessToken(id)));
            List<String> tokens = new ArrayList<>();
            for (Future<String> call : calls) tokens.add(call.get());
            for (int i = 0; i < ids.size(); i++) {
                // Every process got the one new token of each session, never another session's.
                assertEquals(tokens.get(i), tokens.get(i + ids.size()));
                assertEquals(tokens.get(i), tokens.get(i + 2 * ids.size()));
            }
            assertEquals(ids.size(), tokens.stream().distinct().count());
        } finally {
            threads.shutdown();
        }
        assertEquals(ids.size(), sandbox.refreshCount(before), "one refresh per session");
        assertTrue(sandbox.ledger().noTokenPresentedTwice());
    }

    /** The first column of {@code sql}'s rows, run as the superuser. */
    static List<String> column(String sql) throws Exception {
        List<String> values = new ArrayList<>();
        try (Connection c = server.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery(sql)) {
            while (r.next()) values.add(r.getString(1));
        }
        return values;
    }

    @Test
    void aHotStandbyGivenAsThePrimaryIsReadOnlyForReadsTheManagerAndTheLockAndThePrimaryKeepsTheSession()
            throws Exception {
        String table = "m" + TABLES.incrementAndGet();
        PostgresStorage storage = storage(table).build();
        TestTenant tenant = TestTenant.create(sandbox, builder -> builder.storage(storage), true);
        String clientId = sandbox.clients().get(0).id();
        String name = "tenant-integration:" + TokenManager.tenantOrigin(sandbox.url()) + ":" + clientId + ":";
        List<String> stored = column("SELECT value FROM " + table + " WHERE kind = 'tokens'");
        PostgresServer standby = server.standby();
        try {
            // The standby has the table and the session (a base backup taken after the sign-in).
            PostgresStorage replica = PostgresStorage.builder(standby.dataSource(), sandbox.url(), clientId)
                    .table(table)
                    .build();
            StorageException read = assertThrows(StorageException.class, () -> replica.get(name + "tokens"));
            assertEquals(ErrorCode.READ_ONLY, read.code(), read.getMessage());
            assertTrue(
                    read.getMessage().contains("the server is a hot standby (pg_is_in_recovery() is true)"),
                    read.getMessage());

            TokenManager onReplica = TokenManager.builder(
                            sandbox.url(),
                            clientId,
                            sandbox.clients().get(0).redirectUris().get(0))
                    .scopes(Scope.PROFILE_READ)
                    .clock(sandbox.clock())
                    .storage(replica)
                    .build();
            TokenManagerException call = assertThrows(TokenManagerException.class, onReplica::accessToken);
            assertEquals(ErrorCode.STORAGE_FAILED, call.code(), call.getMessage());
            StorageException cause = assertInstanceOf(StorageException.class, call.getCause(), call.getMessage());
            assertEquals(ErrorCode.READ_ONLY, cause.code(), cause.getMessage());

            StorageException lock =
                    assertThrows(StorageException.class, () -> replica.lock().withLock(name + "lock", held -> "ran"));
            assertEquals(ErrorCode.READ_ONLY, lock.code(), lock.getMessage());
            assertTrue(lock.getMessage().contains("is a hot standby"), lock.getMessage());
            assertTrue(lock.getMessage().contains("coordinate nobody"), lock.getMessage());
        } finally {
            standby.close();
        }
        assertEquals(stored, column("SELECT value FROM " + table + " WHERE kind = 'tokens'"));
        assertEquals(0, tenant.refreshCount());
        tenant.advance(Duration.ofMinutes(16));
        tenant.manager().accessToken(); // the primary's session goes on
        assertEquals(1, tenant.refreshCount());
    }

    @Test
    void aHungServerIsStorageFailedWithinTheBoundAndTheSessionGoesOnOnceItAnswers() throws Exception {
        String table = "m" + TABLES.incrementAndGet();
        PostgresStorage storage =
                storage(table).commandTimeout(Duration.ofMillis(700)).build();
        TestTenant tenant = TestTenant.create(sandbox, builder -> builder.storage(storage), true);
        TokenManager manager = tenant.manager();
        tenant.advance(Duration.ofMinutes(16));
        server.hang();
        TokenManagerException e;
        try {
            e = assertThrows(TokenManagerException.class, manager::accessToken);
        } finally {
            server.resume();
        }
        assertEquals(ErrorCode.STORAGE_FAILED, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("within 700 ms"), e.getMessage());
        assertEquals(0, tenant.refreshCount());
        manager.accessToken();
        assertEquals(1, tenant.refreshCount());
    }

    @Test
    void aRestartEndsAHeldLockAndCallsFailTypedUntilTheServerIsBackWithTheSession() throws Exception {
        String table = "m" + TABLES.incrementAndGet();
        PostgresStorage storage =
                storage(table).commandTimeout(Duration.ofSeconds(2)).build();
        TestTenant tenant = TestTenant.create(sandbox, builder -> builder.storage(storage), true);
        TokenManager manager = tenant.manager();
        String lock = "tenant-integration:" + TokenManager.tenantOrigin(sandbox.url()) + ":"
                + sandbox.clients().get(0).id() + ":lock";
        // A restart while the lock is held: the server released it with the connection.
        boolean heldAfter = storage.lock().withLock(lock, held -> {
            try {
                server.kill();
                server.up();
            } catch (Exception x) {
                throw new IllegalStateException(x);
            }
            return held.isHeld();
        });
        assertFalse(heldAfter);
        tenant.advance(Duration.ofMinutes(16));
        server.kill();
        TokenManagerException down = assertThrows(TokenManagerException.class, manager::accessToken);
        assertEquals(ErrorCode.STORAGE_FAILED, down.code(), down.getMessage());
        StorageException cause = assertInstanceOf(StorageException.class, down.getCause(), down.getMessage());
        assertTrue(
                cause.code() == ErrorCode.COMMAND_FAILED || cause.code() == ErrorCode.LOCK_UNAVAILABLE,
                cause.getMessage());
        assertTrue(
                cause.getMessage().contains("could not be reached")
                        || cause.getMessage().contains("connection was lost"),
                cause.getMessage());
        server.up();
        manager.accessToken();
        assertEquals(1, tenant.refreshCount());
        assertTrue(tenant.ledger().noTokenPresentedTwice());
    }
}
