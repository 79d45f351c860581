package io.github.tenantintegration.tokenmanager;

/**
 * A {@link LockingStorage} whose lock shares less between sessions when given one per session: the
 * file storage's {@link #sessionLock()} takes a lock directory per session's lock name ({@code
 * <file>.<h>.refresh.lock}, {@code spec/token-store/README.md}, "Locks"), so that one session's
 * refresh never waits for another's. A manager with a session id uses it; one without uses {@link
 * #lock()}. A storage whose lock already locks by name (Redis, PostgreSQL) needs none.
 */
public interface SessionLockingStorage extends LockingStorage {
    /** The refresh lock of the sessions of this storage, one per lock name. */
    Lock sessionLock();
}
