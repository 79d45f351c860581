package io.github.tenantintegration.tokenmanager;

import java.util.Optional;

/**
 * A storage that reads and deletes a value in one atomic step ({@code spec/token-store/README.md},
 * "What a storage offers"): of any number of concurrent takes of one key, in any processes sharing
 * the storage, at most one returns it. A pending sign-in is taken so at its callback; without it,
 * {@code get} then {@code delete}, which is not atomic (two callbacks of one state arriving at once
 * may both exchange the code). The kit's storages all are.
 */
public interface TakingStorage extends Storage {
    /** The value of {@code key}, deleted in the same step; empty when there is none. */
    Optional<String> take(String key);
}
