package io.github.tenantintegration.tokenmanager;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The records in memory, for one process: the default storage. It brings no cross-process lock:
 * the manager uses an in-process lock by name.
 */
public final class MemoryStorage implements ExpiringStorage, TakingStorage {
    private final ConcurrentMap<String, String> data = new ConcurrentHashMap<>();
    /** When each expiring value is dropped ({@link System#nanoTime()}). */
    private final ConcurrentMap<String, Long> deadlines = new ConcurrentHashMap<>();

    /** An empty storage. */
    public MemoryStorage() {}

    @Override
    public Optional<String> get(String key) {
        dropIfExpired(key);
        return Optional.ofNullable(data.get(key));
    }

    @Override
    public void set(String key, String value) {
        dropExpired();
        deadlines.remove(key);
        data.put(key, value);
    }

    /** Stores {@code value} until {@code lifetime} has passed; expired values are dropped as others are written. */
    @Override
    public void setExpiring(String key, String value, Duration lifetime) {
        dropExpired();
        data.put(key, value);
        deadlines.put(key, System.nanoTime() + lifetime.toNanos());
    }

    @Override
    public Optional<String> take(String key) {
        dropIfExpired(key);
        deadlines.remove(key);
        return Optional.ofNullable(data.remove(key));
    }

    @Override
    public void delete(String key) {
        deadlines.remove(key);
        data.remove(key);
    }

    private void dropIfExpired(String key) {
        Long deadline = deadlines.get(key);
        if (deadline != null && System.nanoTime() - deadline >= 0 && deadlines.remove(key, deadline)) data.remove(key);
    }

    /** Drops every expired value (only the pending sign-ins expire: a few). */
    private void dropExpired() {
        for (String key : deadlines.keySet()) dropIfExpired(key);
    }

    /** Names the keys held, never a value. */
    @Override
    public String toString() {
        return "MemoryStorage" + data.keySet();
    }
}
