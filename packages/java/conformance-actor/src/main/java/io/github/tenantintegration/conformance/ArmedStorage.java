package io.github.tenantintegration.conformance;

import io.github.tenantintegration.tokenmanager.ExpiringStorage;
import io.github.tenantintegration.tokenmanager.Held;
import io.github.tenantintegration.tokenmanager.Lock;
import io.github.tenantintegration.tokenmanager.LockingStorage;
import io.github.tenantintegration.tokenmanager.Storage;
import io.github.tenantintegration.tokenmanager.TakingStorage;
import io.github.tenantintegration.tokenmanager.WaitingLock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The storage the manager is given (its {@code storage} option): the real one, passing the point
 * {@code locked} once the token record is read under the refresh lock, and {@code answered} as the
 * tokens of an answered refresh are written. Its {@link #lock()} is the bring-your-own-lock seam:
 * the storage's own lock, counted, or one that does not lock ({@code "lock": "none"}).
 */
final class ArmedStorage implements LockingStorage, ExpiringStorage, TakingStorage {
    private final Storage inner;
    private final ArmedLock lock;
    private final Fault fault;

    ArmedStorage(Storage inner, Lock lock, Fault fault) {
        this.inner = inner;
        this.lock = new ArmedLock(lock);
        this.fault = fault;
    }

    @Override
    public Lock lock() {
        return lock;
    }

    @Override
    public Optional<String> get(String key) {
        Optional<String> value = inner.get(key);
        if (key.endsWith(":tokens") && lock.running.get() > 0) fault.reach("locked");
        return value;
    }

    @Override
    public void set(String key, String value) {
        if (key.endsWith(":tokens") && fault.takeAnswered()) {
            String action = fault.take("answered");
            if (action != null) fault.halt("answered", action);
        }
        inner.set(key, value);
    }

    @Override
    public void delete(String key) {
        inner.delete(key);
    }

    /** A pending sign-in, with its lifetime where the real storage keeps one. */
    @Override
    public void setExpiring(String key, String value, Duration lifetime) {
        if (inner instanceof ExpiringStorage expiring) expiring.setExpiring(key, value, lifetime);
        else inner.set(key, value);
    }

    /** A pending sign-in taken once, atomically where the real storage can (its get then delete otherwise). */
    @Override
    public Optional<String> take(String key) {
        if (inner instanceof TakingStorage taking) return taking.take(key);
        Optional<String> value = inner.get(key);
        if (value.isPresent()) inner.delete(key);
        return value;
    }

    @Override
    public String where(String key) {
        return inner.where(key);
    }

    /** The lock, counting the tasks running under it; keeps the inner lock's early end of a wait. */
    static final class ArmedLock implements WaitingLock {
        private final Lock inner;
        final AtomicInteger running = new AtomicInteger();

        ArmedLock(Lock inner) {
            this.inner = inner;
        }

        private <T> Task<T> counted(Task<T> task) {
            return held -> {
                running.incrementAndGet();
                try {
                    return task.run(held);
                } finally {
                    running.decrementAndGet();
                }
            };
        }

        @Override
        public <T> T withLock(String name, Task<T> task) {
            return inner.withLock(name, counted(task));
        }

        @Override
        public <T> T withLockUntil(String name, BooleanSupplier until, Task<T> task) {
            if (inner instanceof WaitingLock waiting) return waiting.withLockUntil(name, until, counted(task));
            return withLock(name, task);
        }
    }

    /** A lock that does not lock: only to prove that the suite can fail. */
    static final class Unlocked implements Lock {
        @Override
        public <T> T withLock(String name, Task<T> task) {
            return task.run(Held.ALWAYS);
        }
    }
}
