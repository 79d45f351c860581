package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Intent beats: the lead's decision D7 (issue 36). A holder that runs rewrites its intent with a new
 * {@code since} every min(1 s, intentWait / 4) until it deletes it, never over another holder's
 * intent; a waiter's watch restarts at each beat.
 */
class IntentBeatTest {
    @AutoClose
    private final FakeTenant tenant = FakeTenant.start();

    private final TestClock clock = new TestClock();

    @Test
    void aBeatOfTheHolderRestartsTheWaitersWatch() {
        Intents.Watch watch = new Intents.Watch();
        long ms = TimeUnit.MILLISECONDS.toNanos(1);
        IntentRecord intent = new IntentRecord("f", "the-holder", 1, 1, "elsewhere");
        watch.saw(intent, 0);
        watch.saw(intent, 500 * ms);
        assertEquals(500 * ms, watch.watched("the-holder", 500 * ms));
        // The holder beat: the same holder, a new since. The watch starts again from zero.
        IntentRecord beaten = new IntentRecord("f", "the-holder", 2, 1, "elsewhere");
        watch.saw(beaten, 900 * ms);
        assertEquals(300 * ms, watch.watched("the-holder", 1200 * ms));
    }

    /** A signed-in manager (intentWait 200 ms: a beat every 50 ms) whose token expired. */
    private TokenManager expired(SharedMemory storage) {
        TokenManager manager = tenant.manager()
                .clock(clock)
                .storage(storage)
                .intentWait(Duration.ofMillis(200))
                .build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        return manager;
    }

    private static IntentRecord storedIntent(SharedMemory storage) {
        String raw = storage.data.get(storage.key("intent"));
        return raw == null ? null : IntentRecord.parse(raw).orElse(null);
    }

    @Test
    void theHolderBeatsWhileTheTenantIsSlowAndNeverOverAnotherHoldersIntent() throws Exception {
        SharedMemory storage = new SharedMemory();
        TokenManager manager = expired(storage);
        tenant.tokenDelayMs = 1500;
        CompletableFuture<String> call = CompletableFuture.supplyAsync(manager::accessToken);
        while (storedIntent(storage) == null) Thread.sleep(5);
        IntentRecord first = storedIntent(storage);
        Thread.sleep(300); // six beats
        IntentRecord beaten = storedIntent(storage);
        assertNotNull(beaten);
        assertTrue(beaten.since() > first.since(), "the intent was not beaten: " + first + ", then " + beaten);
        assertEquals(
                new IntentRecord(first.fingerprint(), first.holder(), beaten.since(), first.pid(), first.host()),
                beaten);
        // Right after a beat, another process took the lock and stored its own intent: no beat may
        // overwrite it (the storage replaces it in the beat's own write, before its next read).
        String other =
                new IntentRecord(first.fingerprint(), States.random(), 1, 4242, "another-host.invalid").serialize();
        String intentKey = storage.key("intent");
        CompletableFuture<Void> replaced = new CompletableFuture<>();
        storage.failSet = key -> {
            if (key.equals(intentKey) && !replaced.isDone()) {
                storage.data.put(intentKey, other);
                replaced.complete(null);
                throw new StorageException(ErrorCode.IO_FAILED, key, "SET " + key + " lost (test)", null);
            }
            return false;
        };
        replaced.get(5, TimeUnit.SECONDS);
        Thread.sleep(300);
        assertEquals(other, storage.data.get(intentKey));
        assertNotNull(call.get(10, TimeUnit.SECONDS));
    }

    @Test
    void beatsStopWhenTheIntentIsDeleted() throws Exception {
        SharedMemory storage = new SharedMemory();
        TokenManager manager = expired(storage);
        tenant.tokenDelayMs = 300;
        manager.accessToken();
        assertNull(storedIntent(storage));
        String intentKey = storage.key("intent");
        AtomicInteger writes = new AtomicInteger();
        storage.failSet = key -> {
            if (key.equals(intentKey)) writes.incrementAndGet();
            return false;
        };
        Thread.sleep(300); // six beat intervals
        assertNull(storedIntent(storage));
        assertEquals(0, writes.get());
    }

    @Test
    void theEndOfARefreshNeverWaitsForABeatWhoseStorageReadHangs() throws Exception {
        SharedMemory storage = new SharedMemory();
        TokenManager manager = expired(storage);
        tenant.tokenDelayMs = 500;
        CompletableFuture<String> call = CompletableFuture.supplyAsync(manager::accessToken);
        while (storedIntent(storage) == null) Thread.sleep(5);
        String intentKey = storage.key("intent");
        CountDownLatch hung = new CountDownLatch(1);
        CountDownLatch unhang = new CountDownLatch(1);
        storage.failGet = key -> {
            // The next beat's read: the Redis node stopped answering.
            if (key.equals(intentKey)
                    && Thread.currentThread().getName().equals("tenant-integration-intent-beat")
                    && hung.getCount() == 1) {
                hung.countDown();
                try {
                    unhang.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        };
        try {
            assertTrue(hung.await(10, TimeUnit.SECONDS));
            assertNotNull(call.get(5, TimeUnit.SECONDS), "the refresh waited for a beat whose storage read hangs");
            assertNull(storedIntent(storage));
        } finally {
            unhang.countDown();
        }
        AtomicInteger writes = new AtomicInteger();
        storage.failSet = key -> {
            if (key.equals(intentKey)) writes.incrementAndGet();
            return false;
        };
        Thread.sleep(300); // the abandoned beat's read answers
        assertNull(storedIntent(storage));
        assertEquals(0, writes.get());
    }

    @Test
    void aClosedManagerStopsBeatingAndLeavesItsIntentToTheWaitersWatch() throws Exception {
        stopsBeatingAfter("close");
    }

    @Test
    void aSignedOutManagerStopsBeatingAndLeavesItsIntentToTheWaitersWatch() throws Exception {
        stopsBeatingAfter("signOut");
    }

    private void stopsBeatingAfter(String end) throws Exception {
        SharedMemory storage = new SharedMemory();
        TokenManager manager = expired(storage);
        tenant.tokenDelayMs = 1500;
        String intentKey = storage.key("intent");
        AtomicInteger writes = new AtomicInteger();
        storage.failSet = key -> {
            if (key.equals(intentKey)) writes.incrementAndGet();
            return false;
        };
        CompletableFuture<String> call = CompletableFuture.supplyAsync(manager::accessToken);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (writes.get() < 2 && System.nanoTime() < deadline) Thread.sleep(5);
        assertTrue(writes.get() >= 2, "the holder did not beat");
        if (end.equals("close")) manager.close();
        else manager.signOut();
        int before = writes.get();
        String left = storage.data.get(intentKey);
        Thread.sleep(300); // six beat intervals
        assertEquals(before, writes.get(), "the holder beat after " + end);
        assertNotNull(left, "the intent is left for the waiters' watch");
        call.handle((token, error) -> null).get(10, TimeUnit.SECONDS);
    }
}
