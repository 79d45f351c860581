package io.github.tenantintegration.filestorage;

import io.github.tenantintegration.tokenmanager.ErrorCode;
import io.github.tenantintegration.tokenmanager.TokenManagerException;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.concurrent.TimeUnit;

/**
 * How a waiter for a lock directory learns that it may go on. It polls (every 10–50 ms, with
 * jitter), which alone finds a holder that died and works on any file system; and, where the
 * directory can be watched ({@link WatchService}: inotify on Linux), it also wakes as soon as the lock
 * directory is removed or the token file replaced (a writer's rename), as the other kits' waiters do.
 * A watch only shortens a wait; the lock directory protocol is the same without one.
 */
final class LockWatch implements AutoCloseable {
    private final WatchService service;
    private final Path lockName;
    private final Path fileName;

    private LockWatch(WatchService service, Path lock, Path file) {
        this.service = service;
        this.lockName = lock.getFileName();
        this.fileName = file.getFileName();
    }

    /** A watch of the directory holding {@code lock} and {@code file}, or null when the system gives none. */
    static LockWatch start(Path lock, Path file) {
        WatchService service = null;
        try {
            service = lock.getFileSystem().newWatchService();
            lock.toAbsolutePath()
                    .getParent()
                    .register(
                            service,
                            StandardWatchEventKinds.ENTRY_DELETE,
                            StandardWatchEventKinds.ENTRY_CREATE,
                            StandardWatchEventKinds.ENTRY_MODIFY);
            return new LockWatch(service, lock, file);
        } catch (IOException | UnsupportedOperationException e) {
            if (service != null) {
                try {
                    service.close();
                } catch (IOException ignored) {
                    // Nothing more to do.
                }
            }
            return null;
        }
    }

    /**
     * Waits {@code millis}, or less: until the lock directory is removed or the token file replaced.
     * A null watch waits the whole pause.
     *
     * @throws TokenManagerException {@code ABORTED} when interrupted
     */
    static void pause(LockWatch watch, long millis) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        try {
            if (watch == null) {
                Thread.sleep(millis);
                return;
            }
            while (true) {
                long left = end - System.nanoTime();
                if (left <= 0) return;
                WatchKey key = watch.service.poll(left, TimeUnit.NANOSECONDS);
                if (key == null) return;
                boolean wakes = false;
                for (WatchEvent<?> event : key.pollEvents()) wakes |= watch.wakes(event);
                key.reset();
                if (wakes) return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for the lock");
        } catch (ClosedWatchServiceException e) {
            // Closed under us: the poll goes on alone.
        }
    }

    /** The event may let the waiter go on: the lock went away, or tokens were written. */
    private boolean wakes(WatchEvent<?> event) {
        if (event.kind() == StandardWatchEventKinds.OVERFLOW) return true;
        Object name = event.context();
        if (lockName.equals(name)) return event.kind() == StandardWatchEventKinds.ENTRY_DELETE;
        if (fileName.equals(name)) return event.kind() != StandardWatchEventKinds.ENTRY_DELETE;
        return false;
    }

    @Override
    public void close() {
        try {
            service.close();
        } catch (IOException ignored) {
            // Nothing more to do.
        }
    }
}
