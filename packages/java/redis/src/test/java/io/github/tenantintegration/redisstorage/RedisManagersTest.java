package io.github.tenantintegration.redisstorage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.tenantintegration.tenanttest.Fleets;
import io.github.tenantintegration.tenanttest.Sandbox;
import io.github.tenantintegration.tenanttest.TestTenant;
import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Token managers sharing one Redis, each on a client of its own as processes would be. */
@Tag("process")
class RedisManagersTest {
    @Test
    void fiveManagersAfterExpiryMakeOneRefreshAndPresentNoTokenTwice() throws Exception {
        List<RedisClient> clients = new ArrayList<>();
        try (RedisServer server = RedisServer.start();
                Sandbox sandbox = Sandbox.start()) {
            List<TestTenant> tenants = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                RedisClient client = server.client();
                clients.add(client);
                RedisStorage storage =
                        RedisStorage.builder(client).prefix("fleet:").build();
                tenants.add(TestTenant.create(sandbox, builder -> builder.storage(storage), i == 0));
            }
            Fleets.oneRefreshAfterExpiry(tenants);
        } finally {
            for (RedisClient client : clients) client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }

    @Test
    void redisDownIsStorageFailedAndTheSessionGoesOnOnceItIsBack() throws Exception {
        RedisServer server = RedisServer.start();
        RedisClient client = server.client();
        try (Sandbox sandbox = Sandbox.start()) {
            RedisStorage storage = RedisStorage.builder(client)
                    .commandTimeout(Duration.ofMillis(500))
                    .build();
            TestTenant tenant = TestTenant.create(sandbox, builder -> builder.storage(storage), true);
            TokenManager manager = tenant.manager();
            tenant.advance(Duration.ofMinutes(16));
            server.signal("STOP");
            TokenManagerException e;
            try {
                e = org.junit.jupiter.api.Assertions.assertThrows(TokenManagerException.class, manager::accessToken);
            } finally {
                server.signal("CONT");
            }
            assertEquals(ErrorCode.STORAGE_FAILED, e.code());
            assertEquals(0, tenant.refreshCount());
            manager.accessToken();
            assertEquals(1, tenant.refreshCount());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            server.close();
        }
    }
}
