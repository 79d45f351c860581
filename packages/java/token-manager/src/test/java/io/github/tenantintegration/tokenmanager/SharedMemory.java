package io.github.tenantintegration.tokenmanager;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A storage shared like a file or Redis (it brings a lock, so managers write refresh intents), in
 * memory, whose reads and writes a test can make fail.
 */
class SharedMemory implements LockingStorage {
    final Map<String, String> data = new ConcurrentHashMap<>();
    final ProcessLock lock = new ProcessLock();
    volatile Predicate<String> failGet = key -> false;
    volatile Predicate<String> failSet = key -> false;
    final AtomicInteger gets = new AtomicInteger();

    @Override
    public Optional<String> get(String key) {
        gets.incrementAndGet();
        if (failGet.test(key))
            throw new StorageException(ErrorCode.COMMAND_FAILED, key, "GET " + key + " failed (test)", null);
        return Optional.ofNullable(data.get(key));
    }

    @Override
    public void set(String key, String value) {
        if (failSet.test(key))
            throw new StorageException(ErrorCode.IO_FAILED, key, "SET " + key + " failed (test)", null);
        data.put(key, value);
    }

    @Override
    public void delete(String key) {
        data.remove(key);
    }

    @Override
    public Lock lock() {
        return lock;
    }

    String key(String kind) {
        return data.keySet().stream()
                .filter(k -> k.endsWith(":tokens"))
                .findFirst()
                .orElseThrow()
                .replace(":tokens", ":" + kind);
    }
}
