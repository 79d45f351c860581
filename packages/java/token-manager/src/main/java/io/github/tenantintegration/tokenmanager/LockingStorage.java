package io.github.tenantintegration.tokenmanager;

/**
 * A storage that brings its own cross-process lock (the file storage, Redis). The manager uses that
 * lock unless the builder's {@code lock(...)} gives another, and then also writes refresh intents
 * ({@code spec/token-store/README.md}, "Paused processes"), so that a paused process never makes
 * another present a refresh token that was already rotated away.
 */
public interface LockingStorage extends Storage {
    /** The lock of the processes that share this storage. */
    Lock lock();
}
