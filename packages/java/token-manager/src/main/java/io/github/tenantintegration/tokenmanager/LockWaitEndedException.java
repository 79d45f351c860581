package io.github.tenantintegration.tokenmanager;

/**
 * What a {@link WaitingLock} throws when its {@code until} check ended the wait: a signal to the
 * manager, which then uses the tokens it found. It never reaches a caller of the manager.
 */
public final class LockWaitEndedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The wait for the lock ended: it is no longer needed. */
    public LockWaitEndedException() {
        super("the wait for the lock ended: no longer needed", null, false, false);
    }
}
