package io.github.tenantintegration.tokenmanager;

/**
 * Tells a task running under a {@link Lock} whether the lock is still its own: a fresh check, false
 * once another process took it over while this one was paused.
 */
@FunctionalInterface
public interface Held {
    /** Whether the lock is still held by this task (checked now, not remembered). */
    boolean isHeld();

    /** The {@code Held} of a lock that cannot tell: always true. */
    Held ALWAYS = () -> true;
}
