package io.github.tenantintegration.filestorage;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Writes of one process gathered into one rewrite of the file (group commit), as the Go kit's {@code
 * filestorage/writes.go}. Every {@code set}, {@code delete} and {@code take} reads, changes and writes
 * the whole file under {@code <file>.write.lock}, forced to disk: one rewrite costs the same for one
 * change as for two hundred. A server acting for many users ({@link
 * io.github.tenantintegration.tokenmanager.Sessions}) makes many at once (each refresh writes its
 * intent, its tokens, and deletes its intent), and processes sharing the file take the write lock in
 * turn: one rewrite per change would queue them all behind each other's forced writes. So the changes
 * that wait while a rewrite runs are applied together by the next one, in the order they came; each
 * call still returns only once its change is durable (or with the error that kept it from being so).
 */
final class Writes {
    /** Runs the next batch when the caller that wrote the last one has returned. */
    private static final ExecutorService NEXT = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "tenant-integration-file-writes");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * One call's change of the file's data: returns whether it changed anything.
     *
     * @param apply the change
     * @param done completed once the change is durable, or with the error that kept it from being so
     */
    record Change(Predicate<Map<String, String>> apply, CompletableFuture<Void> done) {}

    private final Consumer<List<Change>> rewrite;
    private final ReentrantLock mu = new ReentrantLock();
    private List<Change> queue = new ArrayList<>();
    private boolean writing; // a thread is rewriting the file and will take the queue after

    /**
     * @param rewrite applies a batch under the write lock, writes the file once, and completes each
     *     change's {@code done}
     */
    Writes(Consumer<List<Change>> rewrite) {
        this.rewrite = rewrite;
    }

    /**
     * Applies {@code apply} to the file's data and writes the file when it changed anything, together
     * with the changes of other threads that wait meanwhile; returns once the change is durable.
     *
     * @throws RuntimeException the error of the lock, the read or the write
     */
    void update(Predicate<Map<String, String>> apply) {
        Change change = new Change(apply, new CompletableFuture<>());
        boolean lead;
        mu.lock();
        try {
            queue.add(change);
            lead = !writing;
            writing = true;
        } finally {
            mu.unlock();
        }
        if (lead) writeQueued();
        try {
            change.done().join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) throw cause;
            throw e;
        }
    }

    /**
     * Rewrites the file with the queued changes, then hands the next batch, if any, to a thread of its
     * own, so that no caller waits for others' batches after its own.
     */
    private void writeQueued() {
        List<Change> batch;
        mu.lock();
        try {
            batch = queue;
            queue = new ArrayList<>();
        } finally {
            mu.unlock();
        }
        try {
            rewrite.accept(batch);
        } catch (RuntimeException | Error e) {
            for (Change change : batch) change.done().completeExceptionally(e);
        }
        mu.lock();
        try {
            if (queue.isEmpty()) writing = false;
            else NEXT.execute(this::writeQueued);
        } finally {
            mu.unlock();
        }
    }
}
