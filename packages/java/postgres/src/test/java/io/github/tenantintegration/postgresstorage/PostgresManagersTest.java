package io.github.tenantintegration.postgresstorage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.tenanttest.Fleets;
import io.github.tenantintegration.tenanttest.Sandbox;
import io.github.tenantintegration.tenanttest.TestTenant;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Token managers on one PostgreSQL, each on a DataSource of its own as processes would be; the server's faults. */
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
