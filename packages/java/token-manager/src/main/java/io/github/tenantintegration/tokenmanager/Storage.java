package io.github.tenantintegration.tokenmanager;

import java.util.Optional;

/**
 * Where the manager keeps its records (JSON texts of {@code spec/token-store}) under string keys.
 * Values are secrets: a storage never logs or prints them. {@link #set} returns only once the
 * value is durable. Implementations are thread-safe; a failure is any unchecked exception
 * (preferably a {@link StorageException} naming the file or key), which the manager reports as
 * {@code STORAGE_FAILED}.
 *
 * <p>A storage shared by processes brings its lock ({@link LockingStorage}).
 */
public interface Storage {
    /** The value of {@code key}, or empty when there is none. */
    Optional<String> get(String key);

    /** Stores {@code value} under {@code key}; durable when it returns. */
    void set(String key, String value);

    /** Removes {@code key}; nothing happens when it is absent. */
    void delete(String key);

    /**
     * Where a user finds {@code key} in this storage, for a message about the value under it (the
     * lead's decision D3): a Redis storage gives the Redis key, prefix and hash tag included, as
     * redis-cli shows it. By default the key itself.
     */
    default String where(String key) {
        return key;
    }
}
