package io.github.tenantintegration.redisstorage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.api.Scope;
import io.github.tenantintegration.tenanttest.Sandbox;
import io.github.tenantintegration.tenanttest.TestTenant;
import io.github.tenantintegration.tokenmanager.Sessions;
import io.github.tenantintegration.tokenmanager.TokenManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Sessions of a server on one Redis, shared by three "processes" (each its own client and Sessions). */
@Tag("process")
class RedisSessionsTest {
    @Test
    void eachSessionIsRefreshedOncePerExpiryAcrossProcesses() throws Exception {
        List<RedisClient> clients = new ArrayList<>();
        try (RedisServer server = RedisServer.start();
                Sandbox sandbox = Sandbox.start()) {
            Sandbox.Client registered = sandbox.clients().get(0);
            List<Sessions> processes = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                RedisClient client = server.client();
                clients.add(client);
                RedisStorage storage =
                        RedisStorage.builder(client).prefix("srv:").build();
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
                        .completeSignIn(new Sessions.Callback(
                                TestTenant.approve(s.request().url()), s.binding(), s.sessionId()));
            }
            RedisCommands<String, String> redis = clients.get(0).connect().sync();
            String scope = sandbox.url() + ":" + registered.id();
            for (String id : ids) assertNotNull(redis.get("srv:tenant-integration:{" + scope + ":" + id + "}:tokens"));
            assertNull(redis.get("srv:tenant-integration:{" + scope + "}:tokens"));
            assertTrue(redis.keys("srv:*pending*").isEmpty(), "every pending sign-in was taken");

            sandbox.advance(Duration.ofMinutes(16));
            long before = sandbox.lastSeq();
            ExecutorService pool = Executors.newFixedThreadPool(9);
            List<Future<String>> calls = new ArrayList<>();
            for (Sessions process : processes)
                for (String id : ids) calls.add(pool.submit(() -> process.accessToken(id)));
            List<String> tokens = new ArrayList<>();
            for (Future<String> call : calls) tokens.add(call.get());
            pool.shutdown();
            for (int i = 0; i < ids.size(); i++) {
                // Every process got the one new token of each session, never another session's.
                assertEquals(tokens.get(i), tokens.get(i + ids.size()));
                assertEquals(tokens.get(i), tokens.get(i + 2 * ids.size()));
            }
            assertEquals(ids.size(), tokens.stream().distinct().count());
            assertEquals(ids.size(), sandbox.refreshCount(before));
            assertTrue(sandbox.ledger().noTokenPresentedTwice());
        } finally {
            for (RedisClient client : clients) client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }
}
