package io.github.tenantintegration.tokenmanager;

import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The records in memory, for one process: the default storage. It brings no cross-process lock:
 * the manager uses an in-process lock by name.
 */
public final class MemoryStorage implements Storage {
    private final ConcurrentMap<String, String> data = new ConcurrentHashMap<>();

    /** An empty storage. */
    public MemoryStorage() {}

    @Override
    public Optional<String> get(String key) {
        return Optional.ofNullable(data.get(key));
    }

    @Override
    public void set(String key, String value) {
        data.put(key, value);
    }

    @Override
    public void delete(String key) {
        data.remove(key);
    }

    /** Names the keys held, never a value. */
    @Override
    public String toString() {
        return "MemoryStorage" + data.keySet();
    }
}
