package io.github.tenantintegration.tokenmanager;

/**
 * Runs a task while holding a lock across every process that shares the storage, with a bounded
 * wait ({@code LOCK_TIMEOUT}). The bring-your-own-lock seam ({@link TokenManager.Builder#lock}).
 */
public interface Lock {
    /** A task run under the lock. */
    @FunctionalInterface
    interface Task<T> {
        /**
         * Runs while the lock is held.
         *
         * @param held tells whether the lock is still this task's (a fresh check each time)
         * @return the task's result
         */
        T run(Held held);
    }

    /**
     * Runs {@code task} holding the lock {@code name}, waiting a bounded time for another holder.
     *
     * @param name the lock's name ({@code tenant-integration:<origin>:<clientId>:lock})
     * @param task what to run under it
     * @return the task's result
     * @throws TokenManagerException {@code LOCK_TIMEOUT} when the lock stayed held for the whole
     *     wait; a storage's error when it cannot be taken
     */
    <T> T withLock(String name, Task<T> task);
}
