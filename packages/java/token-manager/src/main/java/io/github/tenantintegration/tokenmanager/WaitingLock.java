package io.github.tenantintegration.tokenmanager;

import java.util.function.BooleanSupplier;

/**
 * A {@link Lock} whose wait for another holder can end early: {@code until} is called each time the
 * wait wakes (the storage may have changed, or a poll pause passed), before the lock is tried again;
 * when it returns true the wait ends, the task never runs, and {@link LockWaitEndedException} is
 * thrown. The manager passes one that re-reads the tokens, so that a process stops waiting once
 * another stored fresh ones (the file and Redis locks are waiting locks).
 */
public interface WaitingLock extends Lock {
    /**
     * {@link #withLock}, whose wait ends once {@code until} says so.
     *
     * @throws LockWaitEndedException when {@code until} ended the wait (the task did not run)
     */
    <T> T withLockUntil(String name, BooleanSupplier until, Task<T> task);
}
