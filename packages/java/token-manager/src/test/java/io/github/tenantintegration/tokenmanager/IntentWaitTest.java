package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.tenantintegration.internal.ProcessIdentity;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** When a process gives up on another's refresh intent: the lead's decision D1 (issue 36). */
class IntentWaitTest {
    private static final Duration WAIT = Duration.ofMillis(800);

    @AutoClose
    private final FakeTenant tenant = FakeTenant.start();

    private final TestClock clock = new TestClock();
    private final SharedMemory storage = new SharedMemory();

    /** A signed-in manager whose access token has expired, and a live holder's intent on its refresh token. */
    private TokenManager expiredWithIntent(long since, long pid) {
        TokenManager manager =
                tenant.manager().clock(clock).storage(storage).intentWait(WAIT).build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        TokenRecord stored =
                TokenRecord.parse(storage.data.get(storage.key("tokens"))).orElseThrow();
        IntentRecord intent = new IntentRecord(
                TokenRecord.fingerprint(stored.refreshToken), States.random(), since, pid, ProcessIdentity.host());
        storage.data.put(storage.key("intent"), intent.serialize());
        return manager;
    }

    @Test
    void anOldIntentOfALiveHolderIsWatchedForTheWholeWaitNotGivenUpOnByItsAge() {
        // since = 0: an intent written "decades ago", as after a storage outage; its holder (this JVM) lives.
        TokenManager manager = expiredWithIntent(0, ProcessIdentity.pid());
        long started = System.nanoTime();
        manager.accessToken();
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(waited >= WAIT.toMillis(), "waited " + waited + " ms");
        assertEquals(1, tenant.refreshes());
    }

    @Test
    void aFailedReadEndsTheWatchAndTheNextCallWatchesFromZero() throws Exception {
        TokenManager manager = expiredWithIntent(System.currentTimeMillis(), ProcessIdentity.pid());
        String intentKey = storage.key("intent");
        // The storage fails a poll 300 ms into the wait: the call fails with the storage's error.
        long failAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        storage.failGet = key -> key.equals(intentKey) && System.nanoTime() > failAt;
        TokenManagerException e = assertThrows(TokenManagerException.class, manager::accessToken);
        assertEquals(ErrorCode.STORAGE_FAILED, e.code());
        assertEquals(0, tenant.refreshes());
        storage.failGet = key -> false;
        long started = System.nanoTime();
        manager.accessToken();
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertTrue(waited >= WAIT.toMillis(), "a new watch from zero: waited " + waited + " ms");
        assertEquals(1, tenant.refreshes());
    }

    @Test
    void anIntentWhoseHolderExitedIsNotWaitedFor() throws Exception {
        Process exited = new ProcessBuilder("true").start();
        exited.waitFor();
        TokenManager manager = expiredWithIntent(System.currentTimeMillis(), exited.pid());
        long started = System.nanoTime();
        manager.accessToken();
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) < WAIT.toMillis());
        assertEquals(1, tenant.refreshes());
    }

    @Test
    void anIntentStoredTokensEndTheWaitAtOnce() throws Exception {
        TokenManager manager = expiredWithIntent(System.currentTimeMillis(), ProcessIdentity.pid());
        // The holder stores its rotated tokens 200 ms in: the waiter uses them, and presents nothing.
        Thread holder = new Thread(() -> {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
            TokenRecord stored =
                    TokenRecord.parse(storage.data.get(storage.key("tokens"))).orElseThrow();
            TokenRecord rotated = new TokenRecord(
                    "at_holder_abcdefgh",
                    "rt_holder_abcdefgh",
                    "Bearer",
                    900,
                    null,
                    clock.millis(),
                    States.random(),
                    stored.session,
                    stored.seq + 1);
            storage.data.put(storage.key("tokens"), rotated.serialize());
            storage.data.remove(storage.key("intent"));
        });
        holder.start();
        assertEquals("at_holder_abcdefgh", manager.accessToken());
        holder.join();
        assertEquals(0, tenant.refreshes());
    }

    @Test
    void twoReadsMoreThanASecondApartStartANewWatch() {
        Intents.Watch watch = new Intents.Watch();
        IntentRecord intent = new IntentRecord("0".repeat(64), "h".repeat(43), 0, 1, "host");
        long t0 = 1_000_000_000L;
        watch.saw(intent, t0);
        watch.saw(intent, t0 + ms(900));
        watch.saw(intent, t0 + ms(1800));
        assertEquals(ms(1800), watch.watched(intent.holder(), t0 + ms(1800)));
        watch.saw(intent, t0 + ms(3000)); // 1 200 ms after the last read: paused, or not asking
        assertEquals(0, watch.watched(intent.holder(), t0 + ms(3000)));
        watch.broken();
        assertEquals(0, watch.watched(intent.holder(), t0 + ms(3100)));
        IntentRecord other = new IntentRecord("0".repeat(64), "k".repeat(43), 0, 1, "host");
        watch.saw(intent, t0 + ms(3200));
        watch.saw(other, t0 + ms(3300));
        assertEquals(0, watch.watched(intent.holder(), t0 + ms(3300)));
    }

    private static long ms(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }
}
