package io.github.tenantintegration.filestorage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The changes of one process's threads gathered into one rewrite of the token file (group commit). */
class WritesTest {
    @TempDir
    Path dir;

    private static Thread start(Runnable task) {
        Thread thread = new Thread(task);
        thread.start();
        return thread;
    }

    @Test
    void theChangesThatWaitWhileARewriteRunsAreAppliedTogetherByTheNext() throws Exception {
        Map<String, String> data = new HashMap<>();
        List<Integer> batches = new CopyOnWriteArrayList<>();
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch letFirstFinish = new CountDownLatch(1);
        Writes writes = new Writes(batch -> {
            batches.add(batch.size());
            if (batches.size() == 1) {
                firstRunning.countDown();
                await(letFirstFinish);
            }
            for (Writes.Change change : batch) change.apply().test(data);
            for (Writes.Change change : batch) change.done().complete(null);
        });
        Thread first = start(() -> writes.update(d -> d.put("first", "1") == null));
        assertTrue(firstRunning.await(10, TimeUnit.SECONDS));
        List<Thread> others = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String key = "k" + i;
            others.add(start(() -> writes.update(d -> d.put(key, "v") == null)));
        }
        // Every other caller is queued behind the running rewrite, none returned: its change is not written.
        for (long start = System.nanoTime(); others.stream().anyMatch(t -> t.getState() != Thread.State.WAITING); ) {
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "the callers never queued");
            Thread.sleep(5);
        }
        assertTrue(others.stream().allMatch(Thread::isAlive), "a call returned before its change was written");
        letFirstFinish.countDown();
        first.join(10_000);
        for (Thread other : others) other.join(10_000);
        assertEquals(List.of(1, 50), batches, "one rewrite for the first change, one for the fifty queued meanwhile");
        assertEquals(51, data.size());
    }

    @Test
    void aRewriteThatFailsFailsEveryCallOfItsBatchAndTheNextBatchStillRuns() {
        IllegalStateException diskFull = new IllegalStateException("disk full");
        List<Integer> batches = new CopyOnWriteArrayList<>();
        Writes writes = new Writes(batch -> {
            batches.add(batch.size());
            if (batches.size() == 1) throw diskFull;
            for (Writes.Change change : batch) change.done().complete(null);
        });
        assertSame(diskFull, assertThrows(IllegalStateException.class, () -> writes.update(d -> true)));
        writes.update(d -> true);
        assertEquals(List.of(1, 1), batches);
    }

    @Test
    void manyThreadsWritingOneFileAtOnceLoseNoChange() throws Exception {
        FileStorage storage = FileStorage.of(dir.resolve("tokens.json"));
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            String key = "tenant-integration:https://a.test:c:s" + i + ":tokens";
            threads.add(start(() -> storage.set(key, "v")));
        }
        for (Thread thread : threads) thread.join(60_000);
        FileStorage other = FileStorage.of(dir.resolve("tokens.json")); // as another process reads it
        for (int i = 0; i < 64; i++)
            assertEquals(Optional.of("v"), other.get("tenant-integration:https://a.test:c:s" + i + ":tokens"));
        storage.delete("tenant-integration:https://a.test:c:s0:tokens");
        assertEquals(Optional.empty(), other.get("tenant-integration:https://a.test:c:s0:tokens"));
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
