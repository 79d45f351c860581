package io.github.tenantintegration.redisstorage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.StorageException;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("process")
class RedisStorageTest {
    private static final String TOKENS = "tenant-integration:https://acme.tenant.test:demo:tokens";
    private static final String LOCK = "tenant-integration:https://acme.tenant.test:demo:lock";

    private static RedisServer server;
    private static RedisClient client;
    private static RedisCommands<String, String> redis;

    @BeforeAll
    static void start() throws Exception {
        server = RedisServer.start();
        client = server.client();
        redis = client.connect().sync();
    }

    @AfterAll
    static void stop() {
        if (client != null) client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        if (server != null) server.close();
    }

    @Test
    void recordsAreStoredUnderThePrefixedKeysOfTheOtherKits() {
        try (RedisStorage storage = RedisStorage.builder(client).prefix("app:").build()) {
            storage.set(TOKENS, "{\"v\":1}");
            assertEquals("{\"v\":1}", redis.get("app:tenant-integration:{https://acme.tenant.test:demo}:tokens"));
            assertEquals(Optional.of("{\"v\":1}"), storage.get(TOKENS));
            storage.delete(TOKENS);
            assertEquals(Optional.empty(), storage.get(TOKENS));
            assertEquals("app:other", storage.key("other"));
        }
    }

    @Test
    void theKeysOfOneSessionShareOneClusterSlot() {
        int slot = SlotHash.getSlot(Keys.key("", TOKENS));
        for (String kind : List.of("pending", "intent", "lock")) {
            assertEquals(slot, SlotHash.getSlot(Keys.key("p:", TOKENS.replace(":tokens", ":" + kind))));
        }
    }

    @Test
    void theLockLetsOneTaskRunAtATimeAndAnnouncesItsRelease() throws Exception {
        try (RedisStorage a = RedisStorage.builder(client).prefix("one:").build();
                RedisStorage b = RedisStorage.builder(client).prefix("one:").build()) {
            StatefulRedisPubSubConnection<String, String> listener = client.connectPubSub();
            List<String> messages = new CopyOnWriteArrayList<>();
            CountDownLatch announced = new CountDownLatch(1);
            listener.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    messages.add(channel + "=" + message);
                    announced.countDown();
                }
            });
            listener.sync().subscribe("one:tenant-integration:{https://acme.tenant.test:demo}:lock:released");
            AtomicInteger running = new AtomicInteger();
            AtomicInteger most = new AtomicInteger();
            Thread other = new Thread(() -> b.lock().withLock(LOCK, held -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                running.decrementAndGet();
                return null;
            }));
            a.lock().withLock(LOCK, held -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                other.start();
                sleep(300);
                assertTrue(held.isHeld());
                running.decrementAndGet();
                return null;
            });
            other.join();
            assertEquals(1, most.get());
            assertTrue(announced.await(5, TimeUnit.SECONDS));
            assertEquals("one:tenant-integration:{https://acme.tenant.test:demo}:lock:released=", messages.get(0));
            listener.close();
        }
    }

    @Test
    void aSubscribedWaiterLeavesTheBackoffToTheAnnouncementTwoSetsWhileHeldOneAfter() throws Exception {
        String key = "eight:tenant-integration:{https://acme.tenant.test:demo}:lock";
        String channel = key + ":released";
        // The waiter's own client, recording every SET it sends (the lock's tries).
        RedisClient counted = server.client();
        List<String> sets = new CopyOnWriteArrayList<>();
        counted.addListener(new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (event.getCommand().getType().toString().equals("SET"))
                    sets.add(event.getCommand().getArgs().toCommandString());
            }
        });
        // A backoff from 1 ms doubling to a minute: polling on it, the waiter would send a SET at 1, 2, 4,
        // 8… ms, seven or more while the lock is held below; subscribed, it sends none of them.
        try (RedisStorage holder = RedisStorage.builder(client).prefix("eight:").build();
                RedisStorage waiter = RedisStorage.builder(counted)
                        .prefix("eight:")
                        .retryDelay(Duration.ofMillis(1), Duration.ofMinutes(1))
                        .waitTimeout(Duration.ofMinutes(2))
                        .build()) {
            CountDownLatch taken = new CountDownLatch(1);
            CountDownLatch letGo = new CountDownLatch(1);
            Thread holding = new Thread(() -> holder.lock().withLock(LOCK, held -> {
                taken.countDown();
                await(letGo);
                return null;
            }));
            holding.start();
            assertTrue(taken.await(10, TimeUnit.SECONDS));
            AtomicInteger ran = new AtomicInteger();
            Thread waiting = new Thread(() -> waiter.lock().withLock(LOCK, held -> ran.incrementAndGet()));
            waiting.start();
            for (long start = System.nanoTime(); redis.pubsubNumsub(channel).getOrDefault(channel, 0L) < 1; ) {
                assertTrue(System.nanoTime() - start < Duration.ofSeconds(10).toNanos(), "the waiter never subscribed");
                sleep(5);
            }
            sleep(500);
            letGo.countDown();
            holding.join(30_000);
            waiting.join(30_000);
            assertEquals(1, ran.get(), "the waiter was not woken by the release");
            // Refused before and right after subscribing, taken on the announcement (two, when the second
            // try already found the lock let go on a very slow machine).
            assertTrue(sets.size() <= 3, "the waiter sent " + sets.size() + " SETs, want at most 3: " + sets);
            for (String set : sets) assertTrue(set.contains(key), set);
        } finally {
            counted.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void aHeldLockTimesOutTheWaiterWithLockTimeout() {
        redis.set("two:tenant-integration:{https://acme.tenant.test:demo}:lock", "someone-else");
        try (RedisStorage storage = RedisStorage.builder(client)
                .prefix("two:")
                .waitTimeout(Duration.ofMillis(400))
                .build()) {
            StorageException e =
                    assertThrows(StorageException.class, () -> storage.lock().withLock(LOCK, held -> null));
            assertEquals(ErrorCode.LOCK_TIMEOUT, e.code());
            assertTrue(e.getMessage().contains("two:tenant-integration:{https://acme.tenant.test:demo}:lock"));
        }
    }

    @Test
    void aLeaseTakenOverIsReportedAndNotHeld() {
        List<TokenManagerException> lost = new CopyOnWriteArrayList<>();
        try (RedisStorage storage = RedisStorage.builder(client)
                .prefix("three:")
                .onLeaseLost(lost::add)
                .build()) {
            boolean held = storage.lock().withLock(LOCK, h -> {
                redis.set("three:tenant-integration:{https://acme.tenant.test:demo}:lock", "taken-over");
                return h.isHeld();
            });
            assertFalse(held);
            assertEquals(ErrorCode.LEASE_LOST, lost.get(0).code());
            assertEquals(
                    "taken-over",
                    redis.get("three:tenant-integration:{https://acme.tenant.test:demo}:lock"),
                    "another's lease is not released");
        }
    }

    @Test
    void aLeaseIsRenewedWhileTheTaskRuns() {
        try (RedisStorage storage = RedisStorage.builder(client)
                .prefix("four:")
                .lease(Duration.ofMillis(600))
                .build()) {
            boolean held = storage.lock().withLock(LOCK, h -> {
                sleep(1500);
                return h.isHeld();
            });
            assertTrue(held);
        }
    }

    @Test
    void aValueOfAnotherTypeIsNamedAndLeftAlone() {
        redis.hset("five:tenant-integration:{https://acme.tenant.test:demo}:intent", "field", "x");
        try (RedisStorage storage = RedisStorage.builder(client).prefix("five:").build()) {
            StorageException e =
                    assertThrows(StorageException.class, () -> storage.get(TOKENS.replace(":tokens", ":intent")));
            assertEquals(ErrorCode.COMMAND_FAILED, e.code());
            assertTrue(
                    e.getMessage().contains("five:tenant-integration:{https://acme.tenant.test:demo}:intent"),
                    e.getMessage());
            assertTrue(e.getMessage().contains("did not write"), e.getMessage());
            assertEquals("hash", redis.type("five:tenant-integration:{https://acme.tenant.test:demo}:intent"));
        }
    }

    @Test
    void aStoredValueNeverAppearsInAnError() throws Exception {
        try (RedisStorage storage = RedisStorage.builder(client)
                .prefix("six:")
                .commandTimeout(Duration.ofMillis(300))
                .build()) {
            server.signal("STOP");
            try {
                StorageException e =
                        assertThrows(StorageException.class, () -> storage.set(TOKENS, "rt_SECRET_abcdefgh"));
                assertEquals(ErrorCode.COMMAND_FAILED, e.code());
                assertFalse(e.getMessage().contains("rt_SECRET_abcdefgh"));
                assertTrue(e.getMessage().contains("no reply within 300 ms"), e.getMessage());
            } finally {
                server.signal("CONT");
            }
        }
    }

    @Test
    void aSetNxWhoseReplyCameLateIsReleasedSoNobodyWaitsOutItsLease() throws Exception {
        String key = "seven:tenant-integration:{https://acme.tenant.test:demo}:lock";
        try (RedisStorage a = RedisStorage.builder(client)
                        .prefix("seven:")
                        .commandTimeout(Duration.ofMillis(300))
                        .build();
                RedisStorage b = RedisStorage.builder(client).prefix("seven:").build()) {
            server.signal("STOP");
            try {
                TokenManagerException e =
                        assertThrows(TokenManagerException.class, () -> a.lock().withLock(LOCK, held -> null));
                assertEquals(ErrorCode.STORAGE_FAILED, e.code());
                assertEquals(ErrorCode.LOCK_UNAVAILABLE, ((TokenManagerException) e.getCause()).code());
            } finally {
                server.signal("CONT");
            }
            // The server runs the SET NX when it resumes: the late reply releases that lease at once.
            long started = System.nanoTime();
            assertEquals("ran", b.lock().withLock(LOCK, held -> "ran"));
            assertTrue(System.nanoTime() - started < Duration.ofSeconds(5).toNanos(), "waited the 10 s lease");
            assertEquals(null, redis.get(key));
        }
    }

    @Test
    void invalidOptionsAreRefused() {
        assertEquals(
                ErrorCode.INVALID_OPTIONS,
                assertThrows(
                                TokenManagerException.class,
                                () -> RedisStorage.builder(client).prefix("{x}:"))
                        .code());
        RedisClient queueing = RedisClient.create(server.url());
        try {
            queueing.setOptions(ClientOptions.builder().build());
            TokenManagerException e = assertThrows(TokenManagerException.class, () -> RedisStorage.builder(queueing));
            assertTrue(e.getMessage().contains("REJECT_COMMANDS"), e.getMessage());
        } finally {
            queueing.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
        assertThrows(
                TokenManagerException.class,
                () -> RedisStorage.builder(client)
                        .lease(Duration.ofSeconds(1))
                        .renewEvery(Duration.ofSeconds(2))
                        .build());
    }

    static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(60, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
