package io.github.tenantintegration.tokenmanager;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An in-process lock by name with a bounded wait: the lock of a storage that brings none. A
 * {@link ReentrantLock} per name, so a waiting virtual thread does not pin its carrier.
 */
public final class ProcessLock implements Lock {
    private final ConcurrentMap<String, ReentrantLock> locks = new ConcurrentHashMap<>();
    private final Duration timeout;

    /** A lock whose waits last at most 60 s. */
    public ProcessLock() {
        this(Duration.ofSeconds(60));
    }

    /**
     * A lock whose waits last at most {@code timeout}.
     *
     * @throws TokenManagerException {@code INVALID_OPTIONS} when the timeout is not positive
     */
    public ProcessLock(Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new TokenManagerException(ErrorCode.INVALID_OPTIONS, "timeout: give a positive duration");
        }
        this.timeout = timeout;
    }

    @Override
    public <T> T withLock(String name, Task<T> task) {
        ReentrantLock lock = locks.computeIfAbsent(name, n -> new ReentrantLock());
        try {
            if (!lock.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new TokenManagerException(
                        ErrorCode.LOCK_TIMEOUT,
                        "the in-process lock " + name + " stayed held for " + timeout.toMillis() + " ms");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TokenManagerException(ErrorCode.ABORTED, "interrupted while waiting for the lock " + name);
        }
        try {
            return task.run(Held.ALWAYS);
        } finally {
            lock.unlock();
        }
    }
}
