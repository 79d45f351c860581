package io.github.tenantintegration.tokenmanager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A holder whose rotated tokens could not be written keeps writing them, unasked, each second until
 * they land: the other processes, honouring its intent, wait for exactly this write (issue 36, D1).
 */
class UnsavedRetryTest {
    @AutoClose
    private final FakeTenant tenant = FakeTenant.start();

    private final TestClock clock = new TestClock();

    /**
     * A storage shared with other processes whose lock's release waits, while the storage is down,
     * until it is back: a Redis client's command timeout, or a hung server, holds the release up.
     */
    private static final class HeldUpRelease extends SharedMemory {
        volatile boolean down;
        final CountDownLatch back = new CountDownLatch(1);
        private final Lock heldUp = new Lock() {
            @Override
            public <T> T withLock(String name, Task<T> task) {
                T result = task.run(Held.ALWAYS);
                if (down) {
                    try {
                        back.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return result;
            }
        };

        HeldUpRelease() {
            failSet = key -> down && key.endsWith(":tokens");
        }

        @Override
        public Lock lock() {
            return heldUp;
        }
    }

    @Test
    void unsavedTokensAreWrittenUnaskedOnceTheStorageAnswersEvenWhenARetryJoinedACallTheOutageHeldUp()
            throws Exception {
        HeldUpRelease storage = new HeldUpRelease();
        CountDownLatch failed = new CountDownLatch(1);
        TokenManager manager = tenant.manager()
                .clock(clock)
                .storage(storage)
                .onChange(e -> {
                    if (e.kind() == Event.Kind.STORAGE_FAILED) failed.countDown();
                })
                .build();
        FakeTenant.signIn(manager);
        clock.advance(Duration.ofMinutes(16));
        storage.down = true;
        CompletableFuture<String> call = CompletableFuture.supplyAsync(manager::accessToken);
        assertTrue(failed.await(10, TimeUnit.SECONDS), "the write of the rotated tokens failed");
        clock.advance(Duration.ofSeconds(2)); // past the second during which unsaved tokens are served as they are
        // The first retry comes while the call still waits for its lock release: it joins that call.
        Thread.sleep(1500);
        storage.down = false;
        storage.back.countDown();
        assertEquals(tenant.accessToken, call.get(10, TimeUnit.SECONDS));
        // No call comes; the next retry writes the tokens.
        Thread.sleep(1500);
        TokenRecord stored =
                TokenRecord.parse(storage.data.get(storage.key("tokens"))).orElseThrow();
        assertEquals(tenant.accessToken, stored.accessToken, "the rotated tokens were never written without a call");
        assertEquals(1, tenant.refreshes());
    }
}
